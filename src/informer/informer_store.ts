/**
 * The store an informer's reflector writes into.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { contentDiffers } from "../cache/_held_copy.ts";
import { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";
import { Indexer, type IndexerLike, type Indexers } from "../cache/indexer.ts";
import { keyedDelete, keyedGet, keyedUpdate, namespacedGet } from "../cache/_keyed_update.ts";
import { forEachKeyed } from "../cache/_keyed_entries.ts";
import { type KeyFunc, metaNamespaceKeyFunc } from "../cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../cache/namespace_index.ts";
import type { InformerChange } from "./informer_change.ts";
import type { TransformFunc } from "./transform.ts";

/**
 * Options of {@linkcode InformerStore}.
 */
export interface InformerStoreOptions<T extends KubeObjectLike = KubeObject> {
  /**
   * Receives every change, synchronously, after the cache has applied it.
   * It must not throw. It may change the store (an `add`, `update` or
   * `delete` from within is applied and announced at once, a nested call);
   * a `replace` or `resync` in progress then goes on from the snapshot it
   * took, and skips an object that is no longer the one cached under its
   * key, so each object is announced once. Default: none.
   */
  onChange?: (change: InformerChange<T>) => void;
  /** Applied to every object before it is stored. Default: none. */
  transform?: TransformFunc<T>;
  /** The key function. Default: `metaNamespaceKeyFunc`. */
  keyFunc?: KeyFunc<T>;
  /** Index functions. Default: `{ namespace: namespaceIndexFunc }`. */
  indexers?: Indexers<T>;
  /**
   * `restore` (a checkpoint loaded) announces every object as an add, as a
   * first list does (client-go's behaviour on a restart), instead of
   * nothing. Default: `false`.
   */
  replayRestoreAsAdds?: boolean;
}

/**
 * An {@linkcode IndexerLike} that turns the reflector's store calls into
 * changes (the part of client-go's `DeltaFIFO` plus `HandleDeltas` an
 * informer needs, without a second copy of the objects):
 *
 * - `add`/`update` (the reflector calls `update` for ADDED and MODIFIED):
 *   an `add` when the key is new, otherwise an `update(old, new)`.
 * - `delete`: a `delete` with the final state from the watch event; nothing
 *   for an unknown key.
 * - `replace` (every LIST): new keys give `add`s (`isInInitialList` on the
 *   first list only), vanished keys give `delete`s carrying a
 *   {@linkcode DeletedFinalStateUnknown} tombstone with the last known
 *   object, changed objects give `update`s; after the first list, `synced`.
 * - `resync`: an `update` with `oldObject === object` for every object; no I/O.
 *
 * "Changed" means: the two `resourceVersion`s differ or either is missing,
 * or, at the same resourceVersion, the content provably differs (the API
 * server can serve a changed object at the same version: a default added
 * to a CRD's schema, a changed conversion webhook, an etcd restored without
 * bumping its revisions). Content is compared as JSON: values that are not
 * plain (class instances, `Date`s) and values nested deeper than 256 levels
 * are not compared, and count as unchanged. An object relisted (or an event
 * replayed) unchanged at the same resourceVersion is stored again but
 * announced to nobody; with a transform, same-version copies are not
 * compared and never announced.
 * client-go announces every relisted object as an update (a `Replaced`
 * delta); here the periodic resync is the way to re-deliver unchanged
 * objects, and a relist after a reconnection does not flood handlers with
 * no-op updates.
 *
 * An object that the transform or the key function rejects is skipped (the
 * cache keeps its previous state); the other items of a list still apply,
 * then the error is thrown for the reflector to report.
 *
 * @example Which store call becomes which change
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   DeletedFinalStateUnknown,
 *   type InformerChange,
 *   InformerStore,
 *   type KubeObject,
 * } from "../../mod.ts";
 *
 * const changes: InformerChange<KubeObject>[] = [];
 * const store = new InformerStore<KubeObject>({ onChange: (change) => changes.push(change) });
 * const cm = (rv: string) => ({ metadata: { name: "a", namespace: "ns", resourceVersion: rv } });
 * store.replace([cm("1")], "1"); // the first list
 * store.update(cm("2")); // a MODIFIED event
 * store.update(cm("2")); // the same version again: stored, announced to nobody
 * store.replace([], "3"); // a relist: "a" went away while the watch was not looking
 * assert.deepEqual(changes.map((c) => c.type), ["add", "synced", "update", "delete"]);
 * const last = changes.at(-1)!;
 * assert.ok(last.type === "delete" && last.object instanceof DeletedFinalStateUnknown);
 * ```
 */
export class InformerStore<T extends KubeObjectLike = KubeObject> implements IndexerLike<T> {
  readonly #indexer: Indexer<T>;
  readonly #keyFunc: KeyFunc<T>;
  readonly #transform: TransformFunc<T>;
  readonly #onChange: (change: InformerChange<T>) => void;
  readonly #replayRestoreAsAdds: boolean;
  #listed = false;
  /** Counts the calls that may change the cache (a walk checks its snapshot only once it moved). */
  #writes = 0;
  /** A transform was given (the default keeps objects as they are). */
  readonly #transforms: boolean;

  /**
   * Creates an empty store; each option not given takes the default of
   * {@linkcode InformerStoreOptions}.
   *
   * @throws {TypeError} when an option has the wrong type.
   */
  constructor(options: InformerStoreOptions<T> = {}) {
    const {
      onChange = () => {},
      transform = (obj: T) => obj,
      keyFunc = metaNamespaceKeyFunc as KeyFunc<T>,
      indexers = { [NAMESPACE_INDEX]: namespaceIndexFunc } as Indexers<T>,
      replayRestoreAsAdds = false,
    } = options;
    if (typeof replayRestoreAsAdds !== "boolean") {
      throw new TypeError("InformerStore: replayRestoreAsAdds must be a boolean");
    }
    this.#replayRestoreAsAdds = replayRestoreAsAdds;
    for (const [name, f] of Object.entries({ onChange, transform, keyFunc })) {
      if (typeof f !== "function") throw new TypeError(`InformerStore: ${name} must be a function`);
    }
    this.#indexer = new Indexer(keyFunc, indexers);
    this.#keyFunc = keyFunc;
    this.#transform = transform;
    this.#transforms = options.transform !== undefined;
    this.#onChange = onChange;
  }

  /** How many objects the store holds. */
  get size(): number {
    return this.#indexer.size;
  }

  /** True once a first `replace` (list) has been applied. */
  hasSynced(): boolean {
    return this.#listed;
  }

  add(obj: T): void {
    this.update(obj);
  }

  update(obj: T): void {
    const key = this.#keyFunc(obj);
    this.#writes++;
    let next = obj;
    let old: T | undefined;
    if (this.#transforms) {
      // the indexer keys the transformed object itself
      next = this.#transform(obj);
      old = this.#indexer[keyedGet](key, obj);
      this.#indexer.update(next);
    } else {
      // one key per event: computed here, hashed once, the stored copy found once
      old = this.#indexer[keyedUpdate](key, obj);
    }
    if (!old) this.#onChange({ type: "add", key, object: next, isInInitialList: false });
    else if (this.#changed(old, next)) {
      this.#onChange({ type: "update", key, oldObject: old, object: next });
    }
  }

  delete(obj: T): void {
    const key = this.#keyFunc(obj);
    const old = this.#indexer[keyedDelete](key, obj); // (found and removed at once)
    if (!old) return;
    this.#writes++;
    let final = old;
    let failure: unknown;
    try {
      final = this.#transform(obj);
    } catch (err) {
      failure = err; // announce the last known state instead
    }
    this.#onChange({ type: "delete", key, object: final });
    if (failure !== undefined) throw failure;
  }

  /**
   * The cache becomes `items` (a checkpoint's objects) without announcing
   * them: the handlers get the changes after it. With `replayRestoreAsAdds`,
   * exactly as `replace`. Either way the cache then counts as listed.
   */
  restore(items: T[], resourceVersion: string): void {
    if (this.#replayRestoreAsAdds) return this.replace(items, resourceVersion);
    const errors: unknown[] = [];
    this.#replaceAll(this.#transformAll(items, errors), resourceVersion, errors);
    const initial = !this.#listed;
    this.#listed = true;
    if (initial) this.#onChange({ type: "synced" });
    throwAll(errors);
  }

  /** The indexer becomes `next`; what an index function rejected is added to `errors` (the rest is in the cache). */
  #replaceAll(next: T[], resourceVersion: string, errors: unknown[]): void {
    this.#writes++;
    try {
      this.#indexer.replace(next, resourceVersion);
    } catch (err) {
      if (err instanceof AggregateError) errors.push(...err.errors);
      else errors.push(err);
    }
  }

  /** Items transformed in one array (the indexer keys them; a later duplicate wins). */
  #transformAll(items: T[], errors: unknown[]): T[] {
    if (!this.#transforms) return items; // the default keeps every object as it is
    const next: T[] = [];
    for (const obj of items) {
      try {
        next.push(this.#transform(obj));
      } catch (err) {
        errors.push(err);
        // keep the last known state; an object without a key is reported by the indexer
        let old: T | undefined;
        try {
          old = this.#indexer.getByKey(this.#keyFunc(obj));
        } catch { /* no key */ }
        if (old) next.push(old);
      }
    }
    return next;
  }

  replace(items: T[], resourceVersion: string): void {
    const errors: unknown[] = [];
    const next = this.#transformAll(items, errors);
    // (keys and objects walked together: the indexer keeps no key string per object)
    const before = new Map<string, T>();
    this.#indexer[forEachKeyed]((key, obj) => before.set(key, obj));
    this.#replaceAll(next, resourceVersion, errors);
    const initial = !this.#listed;
    this.#listed = true;
    // Announce what the cache now holds, whatever was left out of it: from
    // a snapshot, as onChange may change the store (what it changed is
    // announced by that change, not again here).
    const now = this.#snapshot();
    const writes = this.#writes;
    for (let i = 0; i < now.length; i += 2) {
      const key = now[i] as string;
      const object = now[i + 1] as T;
      const old = before.size === 0 ? undefined : before.get(key);
      if (old) before.delete(key);
      if (writes !== this.#writes && !this.#holds(key, object)) continue;
      if (!old) this.#onChange({ type: "add", key, object, isInInitialList: initial });
      else if (this.#changed(old, object)) {
        this.#onChange({ type: "update", key, oldObject: old, object });
      }
    }
    for (const [key, old] of before) {
      if (writes !== this.#writes && this.#indexer.getByKey(key) !== undefined) continue; // (stored again by onChange)
      this.#onChange({ type: "delete", key, object: new DeletedFinalStateUnknown(key, old) });
    }
    if (initial) this.#onChange({ type: "synced" });
    throwAll(errors);
  }

  resync(): void {
    // from a snapshot: onChange may change the store
    const now = this.#snapshot();
    const writes = this.#writes;
    for (let i = 0; i < now.length; i += 2) {
      const key = now[i] as string;
      const obj = now[i + 1] as T;
      if (writes !== this.#writes && !this.#holds(key, obj)) continue;
      this.#onChange({ type: "update", key, oldObject: obj, object: obj });
    }
  }

  /** Every cached key and object, alternately, in `list()` order (one array). */
  #snapshot(): (string | T)[] {
    const out: (string | T)[] = [];
    this.#indexer[forEachKeyed]((key, obj) => out.push(key, obj));
    return out;
  }

  /** Whether the cache still holds `obj` under `key` (a snapshot's entry: onChange may have changed it). */
  #holds(key: string, obj: T): boolean {
    return this.#indexer[keyedGet](key, obj) === obj;
  }

  list(): T[] {
    return this.#indexer.list();
  }

  listKeys(): string[] {
    return this.#indexer.listKeys();
  }

  /**
   * Every cached object with its key, in `list()` order. Internal: see
   * `_keyed_entries.ts`.
   *
   * @ignore
   */
  [forEachKeyed](fn: (key: string, obj: T) => void): void {
    this.#indexer[forEachKeyed](fn);
  }

  get(obj: T): T | undefined {
    return this.#indexer.get(obj);
  }

  getByKey(key: string): T | undefined {
    return this.#indexer.getByKey(key);
  }

  /**
   * `getByKey` of `namespace/name`, without building the key where the
   * indexer need not (a `Lister`'s `get`). Internal: see `_keyed_update.ts`.
   *
   * @ignore
   */
  [namespacedGet](namespace: string, name: string): T | undefined {
    return this.#indexer[namespacedGet](namespace, name);
  }

  /**
   * The cached object when `listed` is an unchanged copy of it (same key,
   * `uid`, `resourceVersion` and content), or `undefined`: see
   * `Store.unchanged`. With a transform, always `undefined`: the cache
   * holds the transform's output, which a listed object could be compared
   * with only by transforming it first, and a transform may change its
   * input in place or throw (a relist then holds the listed copies until
   * it ends, as without reuse).
   */
  unchanged(listed: T): T | undefined {
    return this.#transforms ? undefined : this.#indexer.unchanged(listed);
  }

  index(indexName: string, obj: T): T[] {
    return this.#indexer.index(indexName, obj);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    return this.#indexer.indexKeys(indexName, indexedValue);
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    return this.#indexer.byIndex(indexName, indexedValue);
  }

  listIndexFuncValues(indexName: string): string[] {
    return this.#indexer.listIndexFuncValues(indexName);
  }

  getIndexers(): Indexers<T> {
    return this.#indexer.getIndexers();
  }

  addIndexers(newIndexers: Indexers<T>): void {
    this.#indexer.addIndexers(newIndexers);
  }

  /** Whether `next` replacing `old` is announced: see "Changed" above. */
  #changed(old: KubeObjectLike, next: KubeObjectLike): boolean {
    const a = old.metadata?.resourceVersion;
    const b = next.metadata?.resourceVersion;
    if (!a || !b || a !== b) return true;
    // The same version: announced only if its content provably changed (a
    // relisted object the cache could not reuse). A transformed copy is not
    // compared.
    return old !== next && !this.#transforms && contentDiffers(old, next);
  }
}

/** Throws the one error, or an AggregateError of several; nothing when there are none. */
function throwAll(errors: unknown[]): void {
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    throw new AggregateError(errors, `${errors.length} listed objects were skipped`);
  }
}
