/**
 * A store with secondary indices (client-go's `cache.Indexer`).
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "./deleted_final_state_unknown.ts";
import { type KeyFunc, metaName, metaNamespaceKeyFunc } from "./key_func.ts";
import { namespaceIndexFunc } from "./namespace_index.ts";
import { type Store, throwRejected } from "./store.ts";
import { checkValues, type Filed, IndexTable, NONE, valuesOf } from "./_index_table.ts";
import { unchangedCopy } from "./_held_copy.ts";
import { keyedDelete, keyedGet, keyedUpdate, namespacedGet } from "./_keyed_update.ts";
import { forEachKeyed } from "./_keyed_entries.ts";
import { joinKey, NamespacedMap, splitKey } from "./_namespaced_map.ts";

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
 * An in-memory {@linkcode IndexerLike}: objects keyed by a
 * {@linkcode KeyFunc}, plus one index per index function.
 *
 * Under {@linkcode metaNamespaceKeyFunc} (the usual key function) the
 * objects are held by namespace, then by name, as client-node's informer
 * holds them (a namespace with a single object holds it without a map of
 * its own): no key string is kept per object (keys are built when asked
 * for: `listKeys`, `indexKeys`), and an index whose function is
 * {@linkcode namespaceIndexFunc} is that layout itself, at no cost of its
 * own. `list` and `listKeys` then give the objects namespace by namespace
 * (namespaces in the order they got their first object, each namespace's
 * objects in the order they were first stored). Under any other key
 * function, all objects are in one map, in the order they were first
 * stored. Either way the namespace index answers alike: a stored
 * {@linkcode DeletedFinalStateUnknown} tombstone is under the namespace of
 * its key (see {@linkcode namespaceIndexFunc}).
 *
 * Indices stay exact: an update removes the object's old index values,
 * recomputed from the stored object as client-go does (an object mutated in
 * place and stored again is searched for in every bucket, so it is still
 * re-indexed correctly; mutating a stored object and then storing a
 * different one is not supported), a delete removes the values recomputed
 * from the stored object, whichever copy it is given (a value whose bucket
 * does not hold the key starts that search; an object mutated in place so
 * that it lost a value must be stored again before it is deleted) and drops
 * buckets that become empty, and a
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
  /** Objects are addressed by namespace and name (`metaNamespaceKeyFunc`); else by key in namespace "". */
  readonly #namespaced: boolean;
  readonly #indexers = new Map<string, IndexFunc<T>>();
  /** Under namespace/name keys, the name an object is stored under (a namespace's lone object is held bare). */
  readonly #storedName: ((obj: T) => string) | undefined;
  #items: NamespacedMap<T>;
  /** Each index's table; `null`: the namespace index, which is `#items` itself. */
  #tables = new Map<string, IndexTable | null>();
  // The indexes with a table, as plain arrays in order (the hot paths run
  // once per object listed or event: no Map iterator or entry array per object).
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
    this.#namespaced = keyFunc === metaNamespaceKeyFunc;
    this.#storedName = this.#namespaced ? storedName : undefined;
    this.#items = new NamespacedMap<T>(this.#storedName);
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
    const name = this.#nameOf(obj); // (throws for an object without a key: nothing changed)
    this.#put(this.#namespaceOf(obj), name, obj);
  }

  /**
   * `update` with the key already computed (it must be `keyFunc(obj)`);
   * returns the object it replaced. Internal: see `_keyed_update.ts`.
   *
   * @ignore
   */
  [keyedUpdate](key: string, obj: T): T | undefined {
    if (!this.#namespaced) return this.#put("", key, obj, key);
    if (obj instanceof DeletedFinalStateUnknown) {
      const [namespace, name] = splitKey(key);
      return this.#put(namespace, name, obj, key);
    }
    // the key proves the object has a name, and a string namespace or none
    const meta = obj.metadata!;
    return this.#put(meta.namespace || "", meta.name!, obj, key);
  }

  /**
   * `getByKey(key)` where `key` is `keyFunc(obj)`, already computed.
   * Internal: see `_keyed_update.ts`.
   *
   * @ignore
   */
  [keyedGet](key: string, obj: T): T | undefined {
    if (!this.#namespaced || obj instanceof DeletedFinalStateUnknown) return this.getByKey(key);
    const meta = obj.metadata!;
    return this.#items.get(meta.namespace || "", meta.name!);
  }

  /**
   * Stores `obj` at its address and files it in every index with a table;
   * returns what it replaced. `key`: its key, when the caller has it.
   */
  #put(namespace: string, name: string, obj: T, key?: string): T | undefined {
    const n = this.#names.length;
    if (n === 0) return this.#items.set(namespace, name, obj); // (the namespace index alone)
    key ??= joinKey(namespace, name);
    if (n === 1) {
      // one index with a table: no values array
      const value = checkValues(this.#names[0], this.#funcs[0](obj));
      const old = this.#items.set(namespace, name, obj);
      this.#tableList[0].set(key, this.#filedUnder(old, obj, 0), value);
      return old;
    }
    // every value first, so that a throwing index function changes nothing
    const values = this.#funcs.map((f, i) => checkValues(this.#names[i], f(obj)));
    const old = this.#items.set(namespace, name, obj);
    for (let i = 0; i < n; i++) {
      this.#tableList[i].set(key, this.#filedUnder(old, obj, i), values[i]);
    }
    return old;
  }

  delete(obj: T): void {
    const name = this.#nameOf(obj);
    this.#remove(this.#namespaceOf(obj), name);
  }

  /**
   * `delete(obj)` with the key already computed (it must be `keyFunc(obj)`);
   * returns the object it removed. Internal: see `_keyed_update.ts`.
   *
   * @ignore
   */
  [keyedDelete](key: string, obj: T): T | undefined {
    if (!this.#namespaced) return this.#remove("", key, key);
    if (obj instanceof DeletedFinalStateUnknown) {
      const [namespace, name] = splitKey(key);
      return this.#remove(namespace, name, key);
    }
    // the key proves the object has a name, and a string namespace or none
    const meta = obj.metadata!;
    return this.#remove(meta.namespace || "", meta.name!, key);
  }

  /**
   * `getByKey` of the key `namespace/name` (`name` when `namespace` is
   * `""`), without building it under namespace/name keys. Internal: see
   * `_keyed_update.ts`.
   *
   * @ignore
   */
  [namespacedGet](namespace: string, name: string): T | undefined {
    // (a name with a "/" is a key split elsewhere: answered as getByKey would)
    if (!this.#namespaced || name.includes("/")) {
      return this.getByKey(namespace ? `${namespace}/${name}` : name);
    }
    return this.#items.get(namespace, name);
  }

  /**
   * Removes the object at an address from the layout and every table;
   * returns it. `key`: its key, when the caller has it.
   */
  #remove(namespace: string, name: string, key?: string): T | undefined {
    const old = this.#items.delete(namespace, name);
    if (old === undefined || this.#names.length === 0) return old;
    key ??= joinKey(namespace, name);
    // where the stored object is filed, recomputed even when it is the
    // object given (the informer deletes the stored copy): no search of every bucket
    for (let i = 0; i < this.#names.length; i++) {
      this.#tableList[i].remove(key, this.#filedAt(old, i));
    }
    return old;
  }

  list(): T[] {
    return this.#items.values();
  }

  listKeys(): string[] {
    return this.#items.keys();
  }

  get(obj: T): T | undefined {
    const name = this.#nameOf(obj);
    return this.#items.get(this.#namespaceOf(obj), name);
  }

  getByKey(key: string): T | undefined {
    if (typeof key !== "string") return undefined;
    if (!this.#namespaced) return this.#items.get("", key);
    const slash = key.lastIndexOf("/"); // (splitKey, without its array)
    return slash > 0
      ? this.#items.get(key.slice(0, slash), key.slice(slash + 1))
      : this.#items.get("", key);
  }

  /**
   * Every stored object with its key, in `list()` order. Internal: see
   * `_keyed_entries.ts`.
   *
   * @ignore
   */
  [forEachKeyed](fn: (key: string, obj: T) => void): void {
    this.#items.forEach(fn);
  }

  unchanged(listed: T): T | undefined {
    if (this.#items.size === 0) return undefined;
    let held: T | undefined;
    try {
      held = this.get(listed);
    } catch {
      return undefined; // no key: no held copy
    }
    return unchangedCopy(held, listed);
  }

  replace(items: T[], _resourceVersion: string): void {
    // Plain arrays and one loop per object: this runs once per object of
    // every list, so no iterator, entry or values array per object.
    const names = this.#names;
    const funcs = this.#funcs;
    const tables = names.map(() => new IndexTable());
    const n = names.length;
    const next = new NamespacedMap<T>(this.#storedName);
    const errors: unknown[] = [];
    const values: Filed[] = new Array(n); // reused: each object's values are filed before the next
    for (const obj of items) {
      let name: string;
      let namespace: string;
      let earlier: T | undefined;
      try {
        name = this.#nameOf(obj);
        namespace = this.#namespaceOf(obj);
        earlier = next.get(namespace, name);
        // The same object twice (a reused copy listed twice): already filed.
        if (earlier === obj) continue;
        for (let i = 0; i < n; i++) values[i] = checkValues(names[i], funcs[i](obj));
      } catch (err) {
        errors.push(err);
        continue;
      }
      if (n > 0) {
        const key = joinKey(namespace, name);
        for (let i = 0; i < n; i++) {
          if (earlier !== undefined) tables[i].remove(key, this.#filedUnder(earlier, obj, i));
          tables[i].add(key, values[i]);
        }
      }
      next.set(namespace, name, obj); // (a key listed twice: the later copy, at the first place)
    }
    this.#items = next;
    const byName = new Map<string, IndexTable | null>();
    for (const [name, table] of this.#tables) {
      byName.set(name, table && tables[names.indexOf(name)]);
    }
    this.#tables = byName;
    this.#tableList = tables;
    throwRejected(errors);
  }

  /** Does nothing: a plain indexer has no one to re-deliver objects to. */
  resync(): void {}

  index(indexName: string, obj: T): T[] {
    const table = this.#table(indexName);
    const values = valuesOf(checkValues(indexName, this.#indexers.get(indexName)!(obj)));
    if (table === null) {
      // namespaces hold disjoint objects: no duplicates
      const objs: T[] = [];
      for (const value of values) this.#items.forEachIn(value, (o) => objs.push(o));
      return objs;
    }
    const keys = new Set<string>();
    for (const value of values) {
      for (const key of table.keys(value)) keys.add(key);
    }
    return Array.from(keys, (key) => this.getByKey(key)!);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    const table = this.#table(indexName);
    if (table !== null) return table.keys(indexedValue);
    return this.#items.namesIn(indexedValue).map((name) => joinKey(indexedValue, name));
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    const table = this.#table(indexName);
    if (table !== null) return table.keys(indexedValue).map((key) => this.getByKey(key)!);
    return this.#items.valuesIn(indexedValue);
  }

  listIndexFuncValues(indexName: string): string[] {
    const table = this.#table(indexName);
    return table === null ? this.#items.namespaces() : table.values();
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
    // The namespace index under namespace/name keys is the layout itself: nothing to build.
    const tabled = new Map([...added].filter(([, f]) => !this.#byLayout(f)));
    // Compute every new value first, so that a throwing index function changes nothing.
    const computed: { key: string; values: Filed[] }[] = [];
    if (tabled.size > 0) {
      this.#items.forEach((key, obj) =>
        computed.push({ key, values: this.#indexValues(obj, tabled) })
      );
    }
    for (const [name, indexFunc] of added) {
      this.#indexers.set(name, indexFunc);
      if (!tabled.has(name)) this.#tables.set(name, null);
    }
    const tables = [...tabled.keys()].map((name) => {
      const table = new IndexTable();
      this.#tables.set(name, table);
      this.#names.push(name);
      this.#funcs.push(tabled.get(name)!);
      this.#tableList.push(table);
      return table;
    });
    for (const { key, values } of computed) {
      tables.forEach((table, i) => table.add(key, values[i]));
    }
  }

  /** Whether the index function `f` is served by the layout (the namespace index under namespace/name keys). */
  #byLayout(f: IndexFunc<T>): boolean {
    return this.#namespaced && f === namespaceIndexFunc;
  }

  #table(indexName: string): IndexTable | null {
    const table = this.#tables.get(indexName);
    if (table === undefined) throw new TypeError(`Indexer: index "${indexName}" does not exist`);
    return table;
  }

  /**
   * The name part of `obj`'s address: its name under namespace/name keys
   * (a tombstone's from its key), else its key. Throws what the key
   * function throws for an object without a key.
   */
  #nameOf(obj: T): string {
    if (!this.#namespaced) return this.#keyFunc(obj);
    if (obj instanceof DeletedFinalStateUnknown) return splitKey(obj.key)[1];
    return metaName(obj);
  }

  /** The namespace part of the address of `obj`, once `#nameOf(obj)` has accepted it. */
  #namespaceOf(obj: T): string {
    if (!this.#namespaced) return "";
    if (obj instanceof DeletedFinalStateUnknown) return splitKey(obj.key)[0];
    return obj.metadata!.namespace || "";
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
    return this.#filedAt(stored, i);
  }

  /**
   * What the stored object `stored` is filed under in the `i`th index,
   * recomputed; `undefined` (unknown: the index searches for the key) when
   * its index function now fails on it.
   */
  #filedAt(stored: T, i: number): Filed | undefined {
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

/**
 * The name under which the layout stores `obj` (it has been accepted by
 * `metaNamespaceKeyFunc`): a tombstone's from its key.
 */
function storedName(obj: KubeObjectLike): string {
  return obj instanceof DeletedFinalStateUnknown ? splitKey(obj.key)[1] : obj.metadata!.name!;
}
