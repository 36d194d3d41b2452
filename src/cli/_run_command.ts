/**
 * How every command ends: its exit code, and its error on stderr as
 * `kube-reflector: <message>` (no stack trace): 2 for a usage error (with a
 * pointer to `--help`), 3 for an unknown resource or a refused verb (1
 * when the discovery could not read some group versions: the name may be
 * theirs, so it is not known to be a typo), the
 * command's own code when Ctrl-C ended it (`watch`: 0; `get`, `changes`:
 * 130), 1 for anything else.
 *
 * @module
 */
import type { CliEnv } from "./cli_env.ts";
import { UsageError } from "./_usage_error.ts";
import { UnknownResourceError } from "../discovery/unknown_resource_error.ts";
import { ResourceVerbError } from "../discovery/resource_verb_error.ts";
import { PromClientMissingError } from "./_metrics_server.ts";

/** The exit codes of the program. */
export const EXIT = Object.freeze({
  ok: 0,
  failure: 1,
  usage: 2,
  unknownResource: 3,
  interrupted: 130,
});

/** The one line an error becomes (its message; never a stack). */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** Writes `kube-reflector: <message>` on stderr. */
export function printError(env: CliEnv, message: string): void {
  env.stderr(`kube-reflector: ${message}\n`);
}

/** Runs `body` and turns what it throws into the exit code and a message. */
export async function runCommand(
  env: CliEnv,
  options: { interruptedCode: number },
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      printError(env, err.message);
      const help = err.command ? `kube-reflector ${err.command} --help` : "kube-reflector help";
      env.stderr(`Run '${help}' for usage.\n`);
      return EXIT.usage;
    }
    if (err instanceof PromClientMissingError) {
      printError(env, err.message);
      return EXIT.usage;
    }
    if (err instanceof UnknownResourceError || err instanceof ResourceVerbError) {
      printError(env, err.message);
      // an incomplete discovery (a group version down) proves no typo: a failure
      const incomplete = err instanceof UnknownResourceError && err.failedGroups.length > 0;
      return incomplete ? EXIT.failure : EXIT.unknownResource;
    }
    if (env.signal.aborted) return options.interruptedCode;
    printError(env, errorMessage(err));
    return EXIT.failure;
  }
}
