/**
 * The checkpoint save a {@linkcode Reflector} makes when `run()` ends
 * (`saveOnStop`) did not finish within `stopSaveTimeoutMs`: it was
 * abandoned (its signal aborted with this error) so that `run()` still
 * ends, and reported to `onError` with phase `"checkpoint"`. The next start
 * loads the previous checkpoint, if any (a half-written one is refused by
 * its checksum, never half-loaded). A storage that is slow or hangs is the
 * usual cause: give it more time, or make it answer its signal.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CheckpointSaveTimeoutError } from "../../mod.ts";
 *
 * const err = new CheckpointSaveTimeoutError("configmaps", 1_000);
 * assert.equal(err.timeoutMs, 1_000);
 * assert.equal(err.message, "the checkpoint save on stop took over 1000 ms");
 * ```
 */
export class CheckpointSaveTimeoutError extends Error {
  /** The checkpoint's storage key. */
  readonly key: string;
  /** The time the save was given, in ms (`stopSaveTimeoutMs`). */
  readonly timeoutMs: number;

  /**
   * Creates the error.
   *
   * @param key The checkpoint's storage key.
   * @param timeoutMs The time the save was given, in ms.
   */
  constructor(key: string, timeoutMs: number) {
    super(`the checkpoint save on stop took over ${timeoutMs} ms`);
    this.name = "CheckpointSaveTimeoutError";
    this.key = key;
    this.timeoutMs = timeoutMs;
  }
}
