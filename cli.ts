#!/usr/bin/env -S deno run -A
/**
 * The `kube-reflector` command-line program: `watch`, `get` and `changes`
 * on any resource by kubectl's names (through API discovery), and `demo`,
 * a live demo on an embedded test API server.
 *
 *   deno run -A cli.ts get deploy -A
 *   npx kube-reflector watch pods -n kube-system -o wide
 *   kube-reflector changes configmaps --state ./state    (cron: the changes since the last run)
 *   kube-reflector demo
 *
 * See docs/cli.md for every flag and the exit codes (0 ok; 1 failure;
 * 2 usage error; 3 unknown resource or verb not served; 130 interrupted).
 *
 * @module
 */
import { cliMain } from "./src/cli/cli_main.ts";
import { exitProcess, processCliEnv } from "./src/cli/_process_env.ts";

cliMain(processCliEnv()).then(exitProcess, (err) => {
  // cliMain turns every error into a message and an exit code; this is a bug's last resort.
  console.error(`kube-reflector: internal error: ${err instanceof Error ? err.message : err}`);
  exitProcess(1);
});
