/**
 * The environment a command of the `kube-reflector` program runs in: its arguments, its output streams, the
 * process environment and a signal for Ctrl-C. cli.ts builds one on Deno and Node; tests build a fake one.
 *
 * @module
 */

/** What a command needs from the process it runs in. */
export interface CliEnv {
  /** The arguments after the command name. */
  args: readonly string[];
  /** Writes text to standard output as is (add "\n" yourself). */
  stdout(text: string): void;
  /**
   * Optional: writes text to standard output and resolves once it has been
   * written (handed to the OS); rejects when it cannot be (a closed pipe, a
   * full disk). Unlike `stdout`, whose closed pipe ends the process quietly,
   * a failure is the caller's to handle: `changes` uses it so that a run
   * whose output was lost does not advance its checkpoint. Without it,
   * commands use `stdout` and treat its throw as the failure.
   */
  writeStdout?(text: string): Promise<void>;
  /** Writes text to standard error as is (add "\n" yourself). */
  stderr(text: string): void;
  /** Whether standard output is a terminal. */
  stdoutIsTerminal: boolean;
  /** Whether standard error is a terminal. */
  stderrIsTerminal: boolean;
  /** Reads an environment variable. */
  env(name: string): string | undefined;
  /** Aborts on Ctrl-C (SIGINT) or SIGTERM. */
  signal: AbortSignal;
}

/** A command of the program: resolves to the process's exit code. */
export type Command = (env: CliEnv) => Promise<number>;
