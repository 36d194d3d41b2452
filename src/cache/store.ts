/**
 * The `Store` interface and a plain in-memory implementation.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { KeyFunc } from "./key_func.ts";
import { heldCopy } from "./_held_copy.ts";

/**
 * A keyed collection of objects: what a reflector writes into. The
 * operations are client-go's `cache.Store`, camelCased; errors are thrown
 * (a {@linkcode KeyError} when the key function rejects an object) rather
 * than returned.
 *
 * Stored objects are shared, not copied: treat what `get`, `list` and
 * friends return as read-only.
 */
export interface Store<T extends KubeObjectLike = KubeObject> {
  /** Inserts `obj`, or replaces the object with the same key. */
  add(obj: T): void;
  /** Replaces the object with the same key as `obj`, or inserts it. */
  update(obj: T): void;
  /** Removes the object with the same key as `obj`; absent keys are ignored. */
  delete(obj: T): void;
  /** Every stored object, in a new array. */
  list(): T[];
  /** Every stored key, in a new array. */
  listKeys(): string[];
  /** The stored object with the same key as `obj`, if any. */
  get(obj: T): T | undefined;
  /** The stored object with this key, if any. */
  getByKey(key: string): T | undefined;
  /**
   * Makes `items` the whole content of the store, in one step: a reader
   * sees either the old content or the new, never a mix. An item whose key
   * (or index) function throws is left out and the rest still replace the
   * content; then the error is thrown (an `AggregateError` for several), so
   * one malformed object in a list cannot keep the store on stale content
   * (the reflector reports it to `onError`). When two items share a key,
   * the later wins. `resourceVersion` is the list's version; stores may
   * ignore it (the reflector tracks its own).
   */
  replace(items: T[], resourceVersion: string): void;
  /**
   * Optional: the stored object when `listed`, an object just listed, is an
   * unchanged copy of it (same key, `uid`, `resourceVersion` and content;
   * top-level `kind` and `apiVersion` are compared only when both have
   * them, as list items carry none), else `undefined`; never throws. A
   * reflector calls it for each item as a list page (or a streaming list's
   * initial event) is decoded and hands what it returns to `replace` in the
   * item's place, so on a relist the listed copies of unchanged objects are
   * garbage at once instead of being held beside the store until the list
   * completes. The content is compared, not only the version: the API
   * server can serve a changed object at the same version (a default added
   * to a CRD's schema, a changed conversion webhook, an etcd restored
   * without bumping its revisions), and a relist must still bring that in.
   * The comparison costs CPU on a relist (about half of what parsing the
   * same objects costs), not on a first list (the store is empty). A
   * subclass that overrides `replace` or `update` to change objects should
   * override this too. The object returned is the store's own: callers must
   * treat it as read-only. A reflector keeps the listed item when the
   * answer is not an object of the expected kind, or when this throws.
   */
  unchanged?(listed: T): T | undefined;
  /**
   * Optional: like `replace`, for a state loaded from a checkpoint rather
   * than listed. A reflector restoring a checkpoint calls it when present,
   * `replace` otherwise; an informer's store implements it to fill its
   * cache without announcing every object as an add (the handlers then get
   * only the changes since the checkpoint).
   */
  restore?(items: T[], resourceVersion: string): void;
  /**
   * Asks the store to send its objects round again. Plain stores have no
   * listeners, so for them it does nothing; informers' queues implement it
   * to re-deliver every object to their handlers (the reflector calls it
   * every `resyncPeriodMs`).
   */
  resync(): void;
}

/**
 * A {@linkcode Store} in a `Map`, keyed by a {@linkcode KeyFunc}
 * (client-go's `cache.NewStore`). Iteration order is insertion order; a
 * `replace` uses the order of its items. Use an {@linkcode Indexer} when
 * you need lookups by namespace, label or any other index.
 *
 * @example A list replaces the content; a bad item is left out, then reported
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyError, MemoryStore, metaNamespaceKeyFunc } from "../../mod.ts";
 *
 * const store = new MemoryStore(metaNamespaceKeyFunc);
 * store.add({ metadata: { name: "a", namespace: "default" } });
 * const listed = [{ metadata: { name: "b", namespace: "default" } }, { metadata: {} }];
 * assert.throws(() => store.replace(listed, "42"), KeyError);
 * assert.deepEqual(store.listKeys(), ["default/b"]);
 * ```
 */
export class MemoryStore<T extends KubeObjectLike = KubeObject> implements Store<T> {
  readonly #keyFunc: KeyFunc<T>;
  #items = new Map<string, T>();

  /**
   * Creates an empty store.
   *
   * @param keyFunc Computes each object's key, for example
   * {@linkcode metaNamespaceKeyFunc}.
   * @throws {TypeError} when `keyFunc` is not a function.
   */
  constructor(keyFunc: KeyFunc<T>) {
    if (typeof keyFunc !== "function") {
      throw new TypeError("MemoryStore: keyFunc must be a function");
    }
    this.#keyFunc = keyFunc;
  }

  /** How many objects the store holds. */
  get size(): number {
    return this.#items.size;
  }

  add(obj: T): void {
    this.#items.set(this.#keyFunc(obj), obj);
  }

  update(obj: T): void {
    this.#items.set(this.#keyFunc(obj), obj);
  }

  delete(obj: T): void {
    this.#items.delete(this.#keyFunc(obj));
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  get(obj: T): T | undefined {
    return this.#items.get(this.#keyFunc(obj));
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  unchanged(listed: T): T | undefined {
    return heldCopy(this.#items, this.#keyFunc, listed);
  }

  replace(items: T[], _resourceVersion: string): void {
    const next = new Map<string, T>();
    const errors: unknown[] = [];
    for (const obj of items) {
      try {
        next.set(this.#keyFunc(obj), obj);
      } catch (err) {
        errors.push(err);
      }
    }
    this.#items = next;
    throwRejected(errors);
  }

  /** Does nothing: a plain store has no one to re-deliver objects to. */
  resync(): void {}
}

/** Throws what a `replace` rejected: nothing, the one error, or an `AggregateError`. */
export function throwRejected(errors: unknown[]): void {
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    throw new AggregateError(errors, `${errors.length} listed objects were left out of the store`);
  }
}
