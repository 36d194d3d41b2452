/**
 * Saves to one checkpoint key from one process, one at a time: each save
 * reads the head, decides and writes, and the next one starts from what it
 * wrote (so concurrent requests in one isolate coalesce instead of each
 * rewriting the head). Saves through different storage objects over the
 * same store share a lock when the storage names its scope (the KV
 * binding, the directory).
 *
 * @module
 */
import type { CheckpointStorage } from "./checkpoint_storage.ts";

const scopes = new WeakMap<CheckpointStorage, object>();
const locks = new WeakMap<object, Map<string, Promise<unknown>>>();

/** Makes saves through `storage` share their locks with every storage of the same `scope`. */
export function setLockScope(storage: CheckpointStorage, scope: object): void {
  scopes.set(storage, scope);
}

/** The scope of `storage`: what it shares locks (and cached checkpoints) with. */
export function scopeOf(storage: CheckpointStorage): object {
  return scopes.get(storage) ?? storage;
}

/**
 * Runs `fn` once every earlier call for the same scope and key has
 * settled. The wait itself is not bounded here: callers race the result
 * against their signal.
 */
export function withKeyLock<R>(
  storage: CheckpointStorage,
  key: string,
  fn: () => Promise<R>,
): Promise<R> {
  const scope = scopeOf(storage);
  let byKey = locks.get(scope);
  if (!byKey) locks.set(scope, byKey = new Map());
  const previous = byKey.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(() => {}, () => {});
  byKey.set(key, settled);
  settled.then(() => {
    if (byKey.get(key) === settled) byKey.delete(key);
  });
  return run;
}
