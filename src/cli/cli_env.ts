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
