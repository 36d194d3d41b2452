/**
 * A {@linkcode Reflector} loaded a checkpoint but could not carry on from
 * it: the server no longer has the checkpoint's resourceVersion (410
 * Expired: it is older than the server's watch history) or the first watch
 * from it failed, so the reflector listed everything instead. Reported to
 * `onError` with phase `"checkpoint"` when that list is applied; the store
 * is then exact again. Routine after a long pause; if it happens at every
 * start, save more often (`saveIntervalMs`) or start sooner after a save.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CheckpointResumeError } from "../../mod.ts";
 *
 * const err = new CheckpointResumeError("configmaps", "1200");
 * assert.equal(err.key, "configmaps");
 * assert.equal(err.resourceVersion, "1200");
 * assert.match(err.message, /"configmaps" at resourceVersion 1200 could not be resumed .*: relisted/);
 * ```
 */
export class CheckpointResumeError extends Error {
  /** The checkpoint's storage key. */
  readonly key: string;
  /** The resourceVersion the checkpoint was at. */
  readonly resourceVersion: string;

  /**
   * Creates the error; the message names the checkpoint and its version.
   *
   * @param key The checkpoint's storage key.
   * @param resourceVersion The resourceVersion the checkpoint was at.
   */
  constructor(key: string, resourceVersion: string) {
    super(
      `the checkpoint "${key}" at resourceVersion ${resourceVersion} could not be resumed (the server no longer has that version, or its watch failed): relisted`,
    );
    this.name = "CheckpointResumeError";
    this.key = key;
    this.resourceVersion = resourceVersion;
  }
}
