import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { assertIdentity, savedIdentity } from "./_identity.ts";
import {
  type CheckpointHeader,
  encodeCheckpoint,
  type EncodeState,
  FORMAT,
  VERSION,
} from "./_format.ts";
import { describeStorageCause } from "./_storage_cause.ts";
import { abortable } from "../async/_abortable.ts";

/**
 * What a checkpoint holds: the objects of a store and the resourceVersion
 * they are exact at, and what they are for.
 */
export interface CheckpointData<T extends KubeObjectLike = KubeObject> {
  /** What the objects are for (server, resource, query, cluster). */
  identity: CheckpointIdentity;
  /** The resourceVersion the objects are exact at: where a watch resumes. Not empty. */
  resourceVersion: string;
  /**
   * The objects. Taken as a snapshot when `saveCheckpoint` is called
   * (copied into an array of references before the first `await`), so a
   * live iterator of a store must not be left to change meanwhile.
   */
  items: Iterable<T>;
}

/**
 * Saves a checkpoint under `key`, replacing the previous one all or nothing
 * (as the storage guarantees). The text is produced as a stream of chunks
 * of about 64 KiB, never as one string, and the event loop gets a turn
 * about every MiB, so saving 100k objects does not stall event handling.
 * The identity is saved with a normalized `server` (no credentials). See
 * docs/checkpoints.md for the format.
 *
 * Resolves with the number of objects and bytes written. Rejects with a
 * `TypeError` for an invalid key, identity, resourceVersion or item (an
 * object without a `metadata` object, or one `JSON.stringify` refuses); a
 * {@linkcode CheckpointError} (`"storage"`, the storage's error as `cause`
 * and, without secrets, in the message) when the storage fails;
 * `signal.reason` as soon as `signal` aborts, even when the storage's `put`
 * never answers. In every such case the previous checkpoint stays in place
 * (as far as the storage keeps its contract).
 *
 * @example Save, then load
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadCheckpoint, memoryCheckpointStorage, saveCheckpoint } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = {
 *   server: "https://k8s.example.com",
 *   apiVersion: "v1",
 *   resource: "configmaps",
 *   namespace: "default",
 * };
 * const items = [
 *   { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } },
 * ];
 * const saved = await saveCheckpoint(storage, "configmaps", { identity, resourceVersion: "42", items });
 * assert.equal(saved.count, 1);
 * const loaded = await loadCheckpoint(storage, "configmaps", identity);
 * assert.equal(loaded?.resourceVersion, "42");
 * assert.deepEqual(loaded?.items, items);
 * assert.equal(loaded?.bytes, saved.bytes);
 * ```
 */
export async function saveCheckpoint<T extends KubeObjectLike = KubeObject>(
  storage: CheckpointStorage,
  key: string,
  data: CheckpointData<T>,
  options: { signal?: AbortSignal } = {},
): Promise<{ count: number; bytes: number }> {
  const { signal } = options;
  signal?.throwIfAborted();
  if (typeof key !== "string" || key === "") {
    throw new TypeError("saveCheckpoint: key must be a non-empty string");
  }
  assertIdentity(data?.identity, "saveCheckpoint");
  if (typeof data.resourceVersion !== "string" || data.resourceVersion === "") {
    throw new TypeError("saveCheckpoint: resourceVersion must be a non-empty string");
  }
  const items = Array.from(data.items);
  const header: CheckpointHeader = {
    format: FORMAT,
    version: VERSION,
    savedAt: new Date().toISOString(),
    resourceVersion: data.resourceVersion,
    count: items.length,
    identity: savedIdentity(data.identity),
  };
  const state: EncodeState = { bytes: 0, finished: false };
  try {
    // raced against the signal: a storage that ignores it cannot hold the caller
    await abortable(
      storage.put(key, encodeCheckpoint(header, items, state, signal), { signal }),
      signal,
    );
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (state.error !== undefined) throw state.error;
    if (err instanceof CheckpointError) throw err;
    throw new CheckpointError(
      "storage",
      key,
      `the storage failed to save it: ${describeStorageCause(err)}`,
      { cause: err },
    );
  }
  if (!state.finished) {
    throw new CheckpointError("storage", key, "the storage did not read the whole checkpoint");
  }
  return { count: items.length, bytes: state.bytes };
}
