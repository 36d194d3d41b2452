/**
 * The program's dispatcher: `kube-reflector COMMAND [flags]` runs `watch`,
 * `get`, `changes` or `demo`; `help [COMMAND]`, `--help` and `-h` print
 * help. cli.ts calls it with the process's environment; tests call it with
 * a fake one.
 *
 * @module
 */
import type { CliEnv, Command } from "./cli_env.ts";
import { changes } from "./changes.ts";
import { demo } from "./demo.ts";
import { get } from "./get.ts";
import { watch } from "./watch.ts";
import { MAIN_HELP } from "./_help.ts";
import { EXIT, printError } from "./_run_command.ts";

/** The commands, by name. */
export const COMMANDS: Readonly<Record<string, Command>> = Object.freeze({
  watch,
  get,
  changes,
  demo,
});

/** `env` with other arguments. */
function withArgs(env: CliEnv, args: readonly string[]): CliEnv {
  return {
    args,
    stdout: (text) => env.stdout(text),
    ...(env.writeStdout ? { writeStdout: (text: string) => env.writeStdout!(text) } : {}),
    stderr: (text) => env.stderr(text),
    stdoutIsTerminal: env.stdoutIsTerminal,
    stderrIsTerminal: env.stderrIsTerminal,
    env: (name) => env.env(name),
    signal: env.signal,
  };
}

/** Runs the program: `env.args` is the whole command line after the program's name. */
export async function cliMain(env: CliEnv): Promise<number> {
  const [name, ...rest] = env.args;
  if (name === undefined) {
    env.stderr(MAIN_HELP);
    return EXIT.usage;
  }
  if (name === "help" || name === "--help" || name === "-h") {
    const topic = rest[0];
    if (topic === undefined) {
      env.stdout(MAIN_HELP);
      return EXIT.ok;
    }
    const command = Object.hasOwn(COMMANDS, topic) ? COMMANDS[topic] : undefined;
    if (command === undefined) {
      printError(env, `unknown command "${topic}"`);
      env.stderr("Run 'kube-reflector help' for usage.\n");
      return EXIT.usage;
    }
    return await command(withArgs(env, ["--help"]));
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    printError(env, `unknown command "${name}"`);
    env.stderr("Run 'kube-reflector help' for usage.\n");
    return EXIT.usage;
  }
  return await command(withArgs(env, rest));
}
