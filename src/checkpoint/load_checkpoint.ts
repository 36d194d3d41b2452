import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { CheckpointReader } from "./_checkpoint_reader.ts";
import { TurnTaker } from "./_yield.ts";
import { describeStorageCause } from "./_storage_cause.ts";
import { abortable, abortableForEach } from "../async/_abortable.ts";

/** A checkpoint read back whole, checked and matching the expected identity. */
export interface LoadedCheckpoint<T extends KubeObjectLike = KubeObject> {
  /** What it is for, as saved (its `server` normalized). */
  identity: CheckpointIdentity;
  /** The resourceVersion the objects are exact at: where a watch resumes. */
  resourceVersion: string;
  /** The objects, in the order they were saved. */
  items: T[];
  /** When it was saved (ISO 8601, the saving machine's clock). */
  savedAt: string;
  /** Its size in bytes. */
  bytes: number;
}

/**
 * Loads the checkpoint under `key`, if it is for `expected`. Resolves
 * `undefined` when there is none. Rejects with a {@linkcode CheckpointError}
 * when it is corrupt, truncated, of a newer format, for another cluster or
 * server (`"foreign-cluster"`), for another resource, namespace, selector or
 * `metadataOnly` setting (`"foreign-resource"`), or when the storage fails
 * (`"storage"`: the message says what the storage's error says, without
 * secrets; the error itself is the `cause`); with `signal.reason` as soon
 * as `signal` aborts, even when the storage (its `get` or a read of the
 * value) never answers: whatever it returns later is released. It never
 * hands out part of a checkpoint: the objects are returned only once the
 * end marker and the checksum have been read and checked. A damaged
 * checkpoint is reported as `"corrupt"` or `"truncated"` even when its
 * header is also foreign.
 *
 * The value is decoded as it streams in, line by line, so the text and the
 * objects are never both held whole; the event loop gets a turn about every
 * MiB.
 *
 * @example A checkpoint is used only for what it was saved for
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   CheckpointError,
 *   loadCheckpoint,
 *   memoryCheckpointStorage,
 *   saveCheckpoint,
 * } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * assert.equal(await loadCheckpoint(storage, "pods", identity), undefined); // none yet
 * await saveCheckpoint(storage, "pods", { identity, resourceVersion: "10", items: [] });
 * assert.equal((await loadCheckpoint(storage, "pods", identity))?.resourceVersion, "10");
 * await assert.rejects(
 *   loadCheckpoint(storage, "pods", { ...identity, labelSelector: "app=web" }),
 *   (err) => err instanceof CheckpointError && err.reason === "foreign-resource",
 * );
 * ```
 */
export async function loadCheckpoint<T extends KubeObjectLike = KubeObject>(
  storage: CheckpointStorage,
  key: string,
  expected: CheckpointIdentity,
  options: { signal?: AbortSignal } = {},
): Promise<LoadedCheckpoint<T> | undefined> {
  const { signal } = options;
  signal?.throwIfAborted();
  if (typeof key !== "string" || key === "") {
    throw new TypeError("loadCheckpoint: key must be a non-empty string");
  }
  const reader = new CheckpointReader<T>(key, expected);
  const turns = new TurnTaker();
  try {
    // Every call into the storage is raced against the signal (a storage
    // that ignores it cannot hold the caller), and what it returns is
    // released on every way out, a value it returns after an abort included.
    const body = await abortable(storage.get(key, { signal }), signal, { dispose: release });
    if (body === undefined) return undefined;
    await abortableForEach(body, signal, (chunk) => {
      reader.push(chunk);
      return turns.add(chunk.byteLength);
    });
    signal?.throwIfAborted();
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (err instanceof CheckpointError) throw err;
    throw new CheckpointError(
      "storage",
      key,
      `the storage failed to read it: ${describeStorageCause(err)}`,
      { cause: err },
    );
  }
  const { header, items, bytes } = reader.finish();
  return {
    identity: header.identity,
    resourceVersion: header.resourceVersion,
    items,
    savedAt: header.savedAt,
    bytes,
  };
}

/** Releases a value nobody will read (its iterator's `return()`), e.g. an open file. */
function release(body: AsyncIterable<Uint8Array> | undefined): unknown {
  return body?.[Symbol.asyncIterator]().return?.();
}
