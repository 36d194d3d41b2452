import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { storageFailure } from "./_storage_cause.ts";
import { abortable } from "../async/_abortable.ts";
import { readStored, release } from "./_head_io.ts";
import { piecesOf } from "./_head.ts";
import { withKeyLock } from "./_key_lock.ts";

/**
 * Deletes the checkpoint under `key` with every piece its head names (its
 * snapshot, log and saved pages): the head first, so that from then on a
 * load finds nothing, then the pieces. A checkpoint of format version 1
 * (one value) or a damaged head is deleted as the one value it is.
 * Resolves the number of values deleted; nothing happens when there is
 * none. Rejects with a `CheckpointError` (`"storage"`) when the storage
 * fails, and with `signal.reason` as soon as `signal` aborts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   deleteCheckpoint,
 *   loadCheckpoint,
 *   memoryCheckpointStorage,
 *   saveCheckpoint,
 * } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * await saveCheckpoint(storage, "pods", { identity, resourceVersion: "3", items: [] });
 * assert.equal(await deleteCheckpoint(storage, "pods"), 2); // the head and its snapshot
 * assert.equal(await loadCheckpoint(storage, "pods", identity), undefined);
 * ```
 */
export async function deleteCheckpoint(
  storage: CheckpointStorage,
  key: string,
  options: { signal?: AbortSignal } = {},
): Promise<number> {
  const { signal } = options;
  signal?.throwIfAborted();
  if (typeof key !== "string" || key === "") {
    throw new TypeError("deleteCheckpoint: key must be a non-empty string");
  }
  try {
    return await abortable(
      withKeyLock(storage, key, async () => {
        let pieces: string[] = [];
        let found = true;
        try {
          const stored = await readStored(storage, key, signal);
          if (stored.kind === "none") found = false;
          if (stored.kind === "stream") release({ [Symbol.asyncIterator]: () => stored.rest });
          if (stored.kind === "head") pieces = piecesOf(key, stored.head);
        } catch (err) {
          if (signal?.aborted || !(err instanceof CheckpointError)) throw err;
          // a damaged head: deleted as one value
        }
        if (!found) return 0;
        await abortable(storage.delete(key, { signal }), signal);
        for (const piece of pieces) await abortable(storage.delete(piece, { signal }), signal);
        return 1 + pieces.length;
      }),
      signal,
    );
  } catch (err) {
    throw storageFailure(err, key, signal, "delete");
  }
}
