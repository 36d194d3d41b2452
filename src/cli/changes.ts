/**
 * `kube-reflector changes RESOURCE --state DIR`: a cron-friendly
 * `catchUp`: prints the changes since the last run as ndjson
 * (`{"type":"ADDED"|"MODIFIED"|"DELETED","object":{...}}`), saves the
 * checkpoint in DIR (a file per resource and selection, created if
 * missing), exits 0. The first run has no checkpoint: every object is
 * printed as ADDED (said on stderr). A catch-up that fails, runs out of
 * budget or cannot save exits 1 with the reason on stderr. Delivery is at
 * least once: the catch-up's saves are staged, and committed to DIR only
 * once every line has been written; a run whose output cannot be written
 * (a closed pipe) exits 1 and leaves the checkpoint where it was.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { catchUp } from "../reflector/catch_up.ts";
import { fileCheckpointStorage } from "../checkpoint/file_checkpoint_storage.ts";
import { resourceListerWatcher } from "../transport/resource_lister_watcher.ts";
import type { Clock } from "../async/clock.ts";
import type { CliEnv, Command } from "./cli_env.ts";
import { parseFlags } from "./_flags.ts";
import { CHANGES_HELP } from "./_help.ts";
import { parseDuration } from "./_duration.ts";
import { eventLine, type EventType } from "./_output.ts";
import { errorMessage, EXIT, printError, runCommand } from "./_run_command.ts";
import { openTarget, type ResolveResource, resourceLabel, TARGET_FLAGS } from "./_target.ts";
import { UsageError } from "./_usage_error.ts";
import { defaultResolve } from "./_default_resolve.ts";
import { withKindOf } from "./_with_kind.ts";
import { StagedCheckpointStorage } from "./_staged_checkpoint_storage.ts";

/** Internals tests set. */
export interface ChangesInternals {
  resolve?: ResolveResource;
  /** The catch-up's clock. Default: the system's. */
  clock?: Clock;
}

const FLAGS = [
  ...TARGET_FLAGS,
  { name: "state", switch: false },
  { name: "budget", switch: false },
];

const DEFAULT_BUDGET_MS = 60_000;

/** The `changes` command. */
export const changes: Command = (env) => runChanges(env);

/** The checkpoint's key: the resource and what was selected. */
export function checkpointKey(
  resource: { group: string; resource: string },
  target: { namespace?: string; labelSelector?: string; fieldSelector?: string },
): string {
  const parts = [
    resource.group === "" ? resource.resource : `${resource.resource}.${resource.group}`,
    target.namespace === undefined ? "all" : `ns=${target.namespace}`,
    ...(target.labelSelector ? [`l=${target.labelSelector}`] : []),
    ...(target.fieldSelector ? [`f=${target.fieldSelector}`] : []),
  ];
  return parts.join(" ");
}

const TYPES: Record<"add" | "update" | "delete", EventType> = {
  add: "ADDED",
  update: "MODIFIED",
  delete: "DELETED",
};

/** `changes`, with internals for tests. */
export function runChanges(env: CliEnv, internals: ChangesInternals = {}): Promise<number> {
  return runCommand(env, { interruptedCode: EXIT.interrupted }, async () => {
    const parsed = parseFlags(env.args, FLAGS, "changes");
    if (parsed.values.get("help") === "true") {
      env.stdout(CHANGES_HELP);
      return EXIT.ok;
    }
    const dir = parsed.values.get("state");
    if (dir === undefined || dir === "") {
      throw new UsageError("missing --state DIR (where the checkpoint is kept)", "changes");
    }
    const budgetText = parsed.values.get("budget");
    const budgetMs = budgetText === undefined ? DEFAULT_BUDGET_MS : parseDuration(budgetText);
    if (budgetMs === undefined || budgetMs <= 0) {
      throw new UsageError(`--budget: not a duration: "${budgetText}" (e.g. 30s, 2m)`, "changes");
    }
    const target = await openTarget(env, parsed, {
      command: "changes",
      verb: "watch",
      allowName: true,
      resolve: internals.resolve ?? defaultResolve,
    });
    const { conn, resource } = target;
    try {
      const lw = resourceListerWatcher(conn.client, {
        apiVersion: resource.apiVersion,
        resource: resource.resource,
        namespace: target.namespace,
        labelSelector: target.labelSelector,
        fieldSelector: target.fieldSelector,
      });
      // the saves wait until the changes are written: at least once
      const storage = new StagedCheckpointStorage(fileCheckpointStorage(dir));
      const result = await catchUp<KubeObject>(lw, {
        storage,
        key: checkpointKey(resource, target),
        budgetMs,
        expectedKind: resource.kind,
        signal: env.signal,
        clock: internals.clock,
        onError: (err) => printError(env, `warning: ${errorMessage(err)}`),
      }).catch((err) => {
        env.signal.throwIfAborted();
        throw new Error(
          `catching up on ${resourceLabel(resource)} failed: ${errorMessage(err)}`,
          { cause: err },
        );
      });
      if (result.listed === "no-checkpoint") {
        printError(env, `first run (no checkpoint in ${dir}): every object is printed as ADDED`);
      } else if (result.listed !== undefined) {
        printError(
          env,
          `listed again (${result.listed}): the changes printed are the difference from the checkpoint`,
        );
      }
      const text = result.changes
        .map((c) => eventLine(TYPES[c.type], withKindOf(resource, c.object)))
        .join("");
      try {
        await writeAll(env, text);
      } catch (err) {
        printError(
          env,
          `stdout closed before every change was written; the checkpoint was not advanced (${
            errorMessage(err)
          })`,
        );
        return EXIT.failure;
      }
      const saveError = result.saveError ?? await storage.commit({ signal: env.signal }).then(
        () => undefined,
        (err) => {
          env.signal.throwIfAborted();
          return err ?? new Error("unknown error");
        },
      );
      if (saveError !== undefined) {
        printError(
          env,
          `the checkpoint could not be saved (${
            errorMessage(saveError)
          }): the next run prints these changes again`,
        );
        return EXIT.failure;
      }
      if (!result.complete) {
        const progress = result.progress
          ? ` (listed ${result.progress.items}${
            result.progress.remaining === undefined
              ? ""
              : ` of ~${result.progress.items + result.progress.remaining}`
          } objects)`
          : "";
        printError(
          env,
          `caught up only partly within the budget${progress}: what was printed is saved; run again to go on (or raise --budget)`,
        );
        return EXIT.failure;
      }
      return EXIT.ok;
    } finally {
      await conn.close();
    }
  });
}

/**
 * Writes `text` to stdout and resolves once it is written; rejects when it
 * cannot be (through `writeStdout` where the environment has it, else
 * `stdout`, whose throw is the failure).
 */
async function writeAll(env: CliEnv, text: string): Promise<void> {
  if (text === "") return;
  if (env.writeStdout) await env.writeStdout(text);
  else env.stdout(text);
}
