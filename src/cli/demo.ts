/**
 * `kube-reflector demo`: the library at work in the first minute, with no
 * cluster. It starts the embedded test API server with a few thousand
 * ConfigMaps, churns them, injects a fault every few seconds (410 Gone on
 * watches and relists, dropped and stalled connections,
 * 429 with Retry-After, an outage), keeps a reflector's store in sync, shows
 * a live status line, and ends with a summary and the check that the store
 * equals the server.
 *
 * @module
 */
import type { CliEnv, Command } from "./cli_env.ts";
import { DEMO_DEFAULTS, parseDemoArgs } from "./_demo_options.ts";
import { runDemo } from "./_demo_run.ts";
import { UsageError } from "./_usage_error.ts";

/** The text of `kube-reflector demo --help`. */
export const DEMO_HELP = `Usage: kube-reflector demo [flags]

A live demo with no cluster: the embedded test API server with ${DEMO_DEFAULTS.objects} ConfigMaps,
steady churn (creates, updates, deletes) and a fault every few seconds: 410 Gone on
a watch and on the relist after it, a dropped connection (TCP reset), a stalled
half-open connection (found by the reflector's idle deadline), 429 Too Many Requests
with Retry-After, the API server down for a second, and restarted with no watch
history. A reflector keeps a store in sync throughout.

On a terminal a status line shows objects, events per second, the resourceVersion, the
time since the last event, relists, reconnects and faults; otherwise a plain line every
few seconds. On Ctrl-C or after --duration the churn stops, the store catches up, a
summary is printed, and the store is checked against the server (same objects, each at
the server's resourceVersion).

Flags:
  --objects N        ConfigMaps to start with; the churn keeps the count near it (default ${DEMO_DEFAULTS.objects})
  --namespaces N     namespaces they are spread over (default ${DEMO_DEFAULTS.namespaces})
  --rate N           writes per second (default ${DEMO_DEFAULTS.rate})
  --duration D       how long to run: 30s, 2m, 500ms... (default: until Ctrl-C on a terminal,
                     ${DEMO_DEFAULTS.nonTerminalDurationMs / 1000}s otherwise)
  --fault-every D    a fault this often; 0: none (default ${DEMO_DEFAULTS.faultEveryMs / 1000}s)
  --seed N           seed of the churn and of the order of the faults (default: random, printed)
  -h, --help         this help

Exit codes: 0 the store equals the server; 1 it does not (the first differences are
printed), or the demo could not run; 2 a bad flag.
`;

/**
 * The `demo` command: parses its flags, runs the demo, resolves to the exit
 * code (0: the store equals the server at the end; 1: it does not, or the
 * demo could not run; 2: a bad flag). Ctrl-C (`env.signal`) ends it normally.
 *
 * @example A short run without a terminal
 * ```ts
 * import assert from "node:assert/strict";
 * import { demo } from "./demo.ts";
 *
 * let out = "";
 * const code = await demo({
 *   args: ["--objects", "100", "--rate", "50", "--duration", "1s", "--seed", "7"],
 *   stdout: (text) => void (out += text),
 *   stderr: (text) => void (out += text),
 *   stdoutIsTerminal: false,
 *   stderrIsTerminal: false,
 *   env: () => undefined,
 *   signal: new AbortController().signal,
 * });
 * assert.equal(code, 0);
 * assert.match(out, /check: store = server/);
 * ```
 */
export const demo: Command = (env: CliEnv): Promise<number> => demoCommand(env);

/** `demo` with test hooks (see {@linkcode runDemo}). */
export async function demoCommand(
  env: CliEnv,
  internals?: Parameters<typeof runDemo>[2],
): Promise<number> {
  let options;
  try {
    options = parseDemoArgs(env.args, {
      terminal: env.stdoutIsTerminal || env.stderrIsTerminal,
      randomSeed: () => Math.floor(Math.random() * 2 ** 31),
    });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    env.stderr(`kube-reflector demo: ${err.message}\nSee 'kube-reflector demo --help'.\n`);
    return 2;
  }
  if (options === "help") {
    env.stdout(DEMO_HELP);
    return 0;
  }
  try {
    return await runDemo(env, options, internals);
  } catch (err) {
    env.stderr(`kube-reflector demo: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
