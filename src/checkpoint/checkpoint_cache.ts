/**
 * Checkpoints kept decoded in memory between loads, so that a warm process
 * (a Worker isolate serving request after request) reads only the head and
 * the log pieces that are new since, not the whole snapshot again.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { scopeOf } from "./_key_lock.ts";

/** What is kept of one checkpoint: which pieces it was made of, and its objects. */
export interface CachedCheckpoint {
  /** The generation of the snapshot the objects were read from. */
  baseGen: string;
  /** The generations of the log pieces applied to it, in order. */
  logGens: string[];
  /** The version the objects are exact at. */
  resourceVersion: string;
  /** The objects; shared with every load that uses them: never changed in place. */
  items: readonly KubeObjectLike[];
}

/**
 * A cache of decoded checkpoints for {@linkcode loadCheckpoint},
 * {@linkcode saveCheckpoint} and `catchUp` (option `cache`). A load whose
 * stored head names the same snapshot as the cached copy, and a log that
 * continues the cached one, reads the head and the new log pieces only,
 * and applies them to the cached objects; anything else (another snapshot,
 * a compaction, a stale head from an eventually consistent store) is read
 * whole, as without a cache. A save remembers what it wrote. Entries are
 * per storage (storages over one KV binding or directory share them) and
 * key, one checkpoint each: the memory it holds is that of the objects of
 * the checkpoints used, which a process answering from them holds anyway.
 *
 * The objects handed out are shared between loads: treat them as
 * read-only (as a store's objects are).
 *
 * @example A warm process reads the head, not the snapshot
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   checkpointCache,
 *   loadCheckpoint,
 *   memoryCheckpointStorage,
 *   saveCheckpoint,
 * } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "configmaps" };
 * const items = Array.from({ length: 100 }, (_, i) => ({ metadata: { name: `cm-${i}`, namespace: "a" } }));
 * await saveCheckpoint(storage, "cms", { identity, resourceVersion: "10", items });
 * const cache = checkpointCache(); // at module scope in a Worker: it lives as long as the isolate
 * const cold = await loadCheckpoint(storage, "cms", identity, { cache });
 * const warm = await loadCheckpoint(storage, "cms", identity, { cache });
 * assert.equal(cold?.values, 2); // the head and the snapshot
 * assert.equal(warm?.values, 1); // the head only
 * assert.deepEqual(warm?.items, cold?.items);
 * ```
 */
export class CheckpointCache {
  readonly #entries = new WeakMap<object, Map<string, CachedCheckpoint>>();

  /** The cached checkpoint of `key` in `storage`, if any. */
  get(storage: CheckpointStorage, key: string): CachedCheckpoint | undefined {
    return this.#entries.get(scopeOf(storage))?.get(key);
  }

  /** Keeps `entry` as the checkpoint of `key` in `storage` (replacing the previous one). */
  set(storage: CheckpointStorage, key: string, entry: CachedCheckpoint): void {
    const scope = scopeOf(storage);
    let byKey = this.#entries.get(scope);
    if (!byKey) this.#entries.set(scope, byKey = new Map());
    byKey.set(key, entry);
  }

  /** Forgets the checkpoint of `key` in `storage`. */
  delete(storage: CheckpointStorage, key: string): void {
    this.#entries.get(scopeOf(storage))?.delete(key);
  }
}

/** A new, empty {@linkcode CheckpointCache}. */
export function checkpointCache(): CheckpointCache {
  return new CheckpointCache();
}
