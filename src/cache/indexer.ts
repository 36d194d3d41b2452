/**
 * A store with secondary indices (client-go's `cache.Indexer`).
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { type KeyFunc, metaNamespaceKeyFunc } from "./key_func.ts";
import { namespaceIndexFunc } from "./namespace_index.ts";
import { type Store, throwRejected } from "./store.ts";
import { checkValues, type Filed, IndexTable, NONE, valuesOf } from "./_index_table.ts";
import { heldCopy } from "./_held_copy.ts";
import { keyedUpdate } from "./_keyed_update.ts";

/**
 * Computes the values under which an object is indexed: none, one (a
 * namespace) or many (label values, owner UIDs). Duplicates are ignored.
 * It must be pure and must not throw for objects you store (if it throws,
 * the operation that called it changes nothing and rethrows).
 */
export type IndexFunc<T> = (obj: T) => string[];

/**
 * Index functions by index name.
 */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/**
 * A {@linkcode Store} that also answers "which objects have this index
 * value?". Methods are client-go's `cache.Indexer`, camelCased; an unknown
 * index name throws a `TypeError`.
 */
export interface IndexerLike<T extends KubeObjectLike = KubeObject> extends Store<T> {
  /** The objects that share at least one value of index `indexName` with `obj`. */
  index(indexName: string, obj: T): T[];
  /** The keys of the objects indexed under `indexedValue` in `indexName`. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** The objects indexed under `indexedValue` in `indexName`. */
  byIndex(indexName: string, indexedValue: string): T[];
  /** Every value that at least one stored object has in `indexName`. */
  listIndexFuncValues(indexName: string): string[];
  /** A copy of the index functions, by index name. */
  getIndexers(): Indexers<T>;
  /**
   * Adds index functions and indexes the objects already stored.
   * @throws {TypeError} when a name is already in use or a value is not a function.
   */
  addIndexers(newIndexers: Indexers<T>): void;
}

/**
 * An in-memory {@linkcode IndexerLike}: a `Map` of objects keyed by a
 * {@linkcode KeyFunc}, plus one index per index function.
 *
 * Indices stay exact: an update removes the object's old index values,
 * recomputed from the stored object as client-go does (an object mutated in
 * place and stored again is searched for in every bucket, so it is still
 * re-indexed correctly; mutating a stored object and then storing a
 * different one is not supported), a delete drops buckets that become empty, and a
 * `replace` builds the new content and indices aside and swaps them in
 * at once. If a key or index function throws, the operation changes
 * nothing. Stored objects are shared, as in every {@linkcode Store}.
 *
 * @example Look objects up by namespace and by label
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Indexer,
 *   type KubeObject,
 *   metaNamespaceKeyFunc,
 *   NAMESPACE_INDEX,
 *   namespaceIndexFunc,
 * } from "../../mod.ts";
 *
 * const byApp = (pod: KubeObject) => pod.metadata.labels?.app ? [pod.metadata.labels.app] : [];
 * const pods = new Indexer(metaNamespaceKeyFunc, {
 *   [NAMESPACE_INDEX]: namespaceIndexFunc,
 *   app: byApp,
 * });
 * pods.add({ metadata: { name: "web-1", namespace: "prod", labels: { app: "web" } } });
 * pods.add({ metadata: { name: "web-2", namespace: "dev", labels: { app: "web" } } });
 * pods.add({ metadata: { name: "db-1", namespace: "prod", labels: { app: "db" } } });
 * assert.deepEqual(pods.indexKeys(NAMESPACE_INDEX, "prod"), ["prod/web-1", "prod/db-1"]);
 * assert.deepEqual(pods.indexKeys("app", "web"), ["prod/web-1", "dev/web-2"]);
 * pods.update({ metadata: { name: "web-2", namespace: "dev", labels: { app: "api" } } });
 * assert.deepEqual(pods.indexKeys("app", "web"), ["prod/web-1"]); // re-indexed, not duplicated
 * assert.deepEqual(pods.listIndexFuncValues("app").sort(), ["api", "db", "web"]);
 * ```
 */
export class Indexer<T extends KubeObjectLike = KubeObject> implements IndexerLike<T> {
  readonly #keyFunc: KeyFunc<T>;
  readonly #indexers = new Map<string, IndexFunc<T>>();
  #items = new Map<string, T>();
  #tables = new Map<string, IndexTable>();
  // The same indexes as plain arrays, in order (the hot paths run once per
  // object listed or event: no Map iterator or entry array per object).
  readonly #names: string[] = [];
  readonly #funcs: IndexFunc<T>[] = [];
  #tableList: IndexTable[] = [];

  /**
   * Creates an empty indexer.
   *
   * @param keyFunc Computes each object's key, for example {@linkcode metaNamespaceKeyFunc}.
   * @param indexers Index functions by index name. Default: `{}` (add some later with `addIndexers`).
   * @throws {TypeError} when `keyFunc` or an index function is not a function.
   */
  constructor(keyFunc: KeyFunc<T>, indexers: Indexers<T> = {}) {
    if (typeof keyFunc !== "function") throw new TypeError("Indexer: keyFunc must be a function");
    this.#keyFunc = keyFunc;
    this.addIndexers(indexers);
  }

  /** How many objects the indexer holds. */
  get size(): number {
    return this.#items.size;
  }

  add(obj: T): void {
    this.update(obj);
  }

  update(obj: T): void {
    this[keyedUpdate](this.#keyFunc(obj), obj);
  }

  /**
   * `update` with the key already computed (it must be `keyFunc(obj)`);
   * returns the object it replaced. Internal: see `_keyed_update.ts`.
   *
   * @ignore
   */
  [keyedUpdate](key: string, obj: T): T | undefined {
    const old = this.#items.get(key);
    const n = this.#names.length;
    if (n === 1) {
      // one index (the usual namespace index): no values array
      if (old === undefined || !this.#keyFiled(0, old, obj)) {
        const value = checkValues(this.#names[0], this.#funcs[0](obj));
        this.#tableList[0].set(key, this.#filedUnder(old, obj, 0), value);
      }
    } else if (n > 1) {
      // every value first, so that a throwing index function changes nothing
      const values = this.#funcs.map((f, i) => checkValues(this.#names[i], f(obj)));
      for (let i = 0; i < n; i++) {
        if (old !== undefined && this.#keyFiled(i, old, obj)) continue;
        this.#tableList[i].set(key, this.#filedUnder(old, obj, i), values[i]);
      }
    }
    this.#items.set(key, obj);
    return old;
  }

  delete(obj: T): void {
    const key = this.#keyFunc(obj);
    const old = this.#items.get(key);
    if (old === undefined) return;
    this.#items.delete(key);
    for (let i = 0; i < this.#names.length; i++) {
      this.#tableList[i].remove(key, this.#filedUnder(old, obj, i));
    }
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
    // Plain arrays and one loop per object: this runs once per object of
    // every list, so no iterator, entry or values array per object.
    const names = this.#names;
    const funcs = this.#funcs;
    const tables = names.map(() => new IndexTable());
    const n = names.length;
    const nextItems = new Map<string, T>();
    const errors: unknown[] = [];
    const values: Filed[] = new Array(n); // reused: each object's values are filed before the next
    for (const obj of items) {
      let key: string;
      let earlier: T | undefined;
      try {
        key = this.#keyFunc(obj);
        earlier = nextItems.get(key);
        // The same object twice (a reused copy listed twice): already filed.
        if (earlier === obj) continue;
        for (let i = 0; i < n; i++) values[i] = checkValues(names[i], funcs[i](obj));
      } catch (err) {
        errors.push(err);
        continue;
      }
      if (n > 0) {
        for (let i = 0; i < n; i++) {
          if (earlier !== undefined) tables[i].remove(key, this.#filedUnder(earlier, obj, i));
          tables[i].add(key, values[i]);
        }
      }
      nextItems.set(key, obj);
    }
    this.#items = nextItems;
    this.#tables = new Map(names.map((name, i) => [name, tables[i]]));
    this.#tableList = tables;
    throwRejected(errors);
  }

  /** Does nothing: a plain indexer has no one to re-deliver objects to. */
  resync(): void {}

  index(indexName: string, obj: T): T[] {
    const table = this.#table(indexName);
    const values = valuesOf(checkValues(indexName, this.#indexers.get(indexName)!(obj)));
    const keys = new Set<string>();
    for (const value of values) {
      for (const key of table.keys(value)) keys.add(key);
    }
    return Array.from(keys, (key) => this.#items.get(key)!);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    return this.#table(indexName).keys(indexedValue);
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    return this.indexKeys(indexName, indexedValue).map((key) => this.#items.get(key)!);
  }

  listIndexFuncValues(indexName: string): string[] {
    return this.#table(indexName).values();
  }

  getIndexers(): Indexers<T> {
    return Object.fromEntries(this.#indexers);
  }

  addIndexers(newIndexers: Indexers<T>): void {
    if (typeof newIndexers !== "object" || newIndexers === null) {
      throw new TypeError("Indexer: indexers must be an object of index functions");
    }
    const added = new Map(Object.entries(newIndexers));
    const taken = [...added.keys()].filter((name) => this.#indexers.has(name));
    if (taken.length > 0) {
      throw new TypeError(`Indexer: index ${taken.map((n) => `"${n}"`).join(", ")} already exists`);
    }
    for (const [name, indexFunc] of added) {
      if (typeof indexFunc !== "function") {
        throw new TypeError(`Indexer: index function "${name}" is not a function`);
      }
    }
    if (added.size === 0) return;
    // Compute every new value first, so that a throwing index function changes nothing.
    const computed = Array.from(
      this.#items,
      ([key, obj]) => ({ key, values: this.#indexValues(obj, added) }),
    );
    const tables = [...added.keys()].map((name) => {
      const table = new IndexTable();
      this.#indexers.set(name, added.get(name)!);
      this.#tables.set(name, table);
      this.#names.push(name);
      this.#funcs.push(added.get(name)!);
      this.#tableList.push(table);
      return table;
    });
    for (const { key, values } of computed) {
      tables.forEach((table, i) => table.add(key, values[i]));
    }
  }

  #table(indexName: string): IndexTable {
    const table = this.#tables.get(indexName);
    if (!table) throw new TypeError(`Indexer: index "${indexName}" does not exist`);
    return table;
  }

  /**
   * Whether index `i` leaves `stored` where it is when `incoming` replaces
   * it under the same key, without running the index function: the
   * namespace index under `namespace/name` keys, when both objects have the
   * same namespace (a key holds the namespace; the check also catches a
   * stored tombstone or a stored object someone changed). An update then
   * skips the index function (twice), its arrays and the bucket lookups.
   */
  #keyFiled(i: number, stored: T, incoming: T): boolean {
    return this.#funcs[i] === namespaceIndexFunc && this.#keyFunc === metaNamespaceKeyFunc &&
      (stored.metadata?.namespace ?? "") === (incoming.metadata?.namespace ?? "");
  }

  /**
   * What the stored object `stored` was filed under in the `i`th index,
   * recomputed (as client-go does; remembering it cost about 30 bytes per
   * object); nothing when there is none; `undefined` (unknown: the index
   * searches for the key) when its index function now fails on it, or when
   * it is the very object being stored again (`incoming`): then it was
   * mutated in place and says nothing about where it was filed.
   */
  #filedUnder(stored: T | undefined, incoming: T, i: number): Filed | undefined {
    if (stored === undefined) return NONE;
    if (stored === incoming) return undefined;
    try {
      return checkValues(this.#names[i], this.#funcs[i](stored));
    } catch {
      return undefined;
    }
  }

  /** The values of `obj` in each of `indexers`, in their order. */
  #indexValues(obj: T, indexers: Map<string, IndexFunc<T>>): Filed[] {
    const values: Filed[] = [];
    for (const [name, indexFunc] of indexers) values.push(checkValues(name, indexFunc(obj)));
    return values;
  }
}
