/**
 * Why a {@linkcode ReflectorStateError} was thrown:
 * - `"no-checkpoint"`: `saveCheckpoint()` on a reflector made without the
 *   `checkpoint` option;
 * - `"not-synced"`: `saveCheckpoint()` before the first sync (there is no
 *   complete state to save yet);
 * - `"running"`: `run()` while an earlier `run()` has not ended;
 * - `"stopped"`: `waitForSync()` when `run()` ended before the first sync.
 */
export type ReflectorStateErrorReason = "no-checkpoint" | "not-synced" | "running" | "stopped";

const MESSAGES: Readonly<Record<ReflectorStateErrorReason, string>> = {
  "no-checkpoint": "no checkpoint option",
  "not-synced": "not synced, nothing to save",
  running: "already running",
  stopped: "stopped before its first sync",
};

/**
 * A {@linkcode Reflector} asked for something its options or its state
 * rule out: a checkpoint save without the `checkpoint` option or before the
 * first sync, a second `run()` at once, or a wait for a sync that will not
 * come because `run()` ended first. `reason` tells which; nothing was
 * changed or sent.
 *
 * @example A wait for a sync that a stop made impossible
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Indexer,
 *   KubeClient,
 *   metaNamespaceKeyFunc,
 *   Reflector,
 *   ReflectorStateError,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const reflector = new Reflector(lw, new Indexer(metaNamespaceKeyFunc), { name: "cms" });
 * await assert.rejects(
 *   reflector.saveCheckpoint(),
 *   (err) => err instanceof ReflectorStateError && err.reason === "no-checkpoint",
 * );
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * const synced = reflector.waitForSync();
 * ac.abort(); // before the first list could answer
 * await done;
 * await assert.rejects(synced, (err) => {
 *   assert.ok(err instanceof ReflectorStateError);
 *   assert.equal(err.reason, "stopped");
 *   assert.equal(err.message, "Reflector cms: stopped before its first sync");
 *   return true;
 * });
 * await server.close();
 * ```
 */
export class ReflectorStateError extends Error {
  /** The reflector's name (its `name` option). */
  readonly reflector: string;
  /** What was asked at the wrong time; see {@linkcode ReflectorStateErrorReason}. */
  readonly reason: ReflectorStateErrorReason;

  /**
   * Creates the error; the message names the reflector and says what is wrong.
   *
   * @param reflector The reflector's name.
   * @param reason Why; see {@linkcode ReflectorStateErrorReason}.
   */
  constructor(reflector: string, reason: ReflectorStateErrorReason) {
    super(`Reflector ${reflector}: ${MESSAGES[reason]}`);
    this.name = "ReflectorStateError";
    this.reflector = reflector;
    this.reason = reason;
  }
}
