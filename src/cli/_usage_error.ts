/**
 * A mistake in how the program was called (a bad flag, a missing
 * argument): exit code 2, the message on stderr with a pointer to `--help`.
 *
 * @module
 */

/** A usage error of the command line (exit code 2). */
export class UsageError extends Error {
  /** The command whose `--help` explains the usage (`"get"`), if any. */
  readonly command?: string;

  /** Creates the error; `command` names the command whose help to point to. */
  constructor(message: string, command?: string) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}
