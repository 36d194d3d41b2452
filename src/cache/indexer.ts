/**
 * A store with secondary indices (client-go's `cache.Indexer`).
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { KeyFunc } from "./key_func.ts";
import { type Store, throwRejected } from "./store.ts";
import {
  addToIndices,
  checkValues,
  type Entry,
  type Indices,
  removeFromIndices,
} from "./_index_map.ts";

/**
 * Computes the values under which an object is indexed: none, one (a
 * namespace) or many (label values, owner UIDs). Duplicates are ignored.
 * It must be pure and must not throw for objects you store (if it throws,
 * the operation that called it changes nothing and rethrows).
 *
 * @example
 * ```ts
 * import type { IndexFunc } from "./indexer.ts";
 * import type { KubeObject } from "../api/types.ts";
 * const byApp: IndexFunc<KubeObject> = (obj) => {
 *   const app = obj.metadata.labels?.app;
 *   return app ? [app] : [];
 * };
 * console.log(byApp({ metadata: { name: "a", labels: { app: "web" } } })); // ["web"]
 * ```
 */
export type IndexFunc<T> = (obj: T) => string[];

/**
 * Index functions by index name.
 *
 * @example
 * ```ts
 * import type { Indexers } from "./indexer.ts";
 * import { namespaceIndexFunc } from "./namespace_index.ts";
 * import type { KubeObject } from "../api/types.ts";
 * const indexers: Indexers<KubeObject> = { namespace: namespaceIndexFunc };
 * console.log(Object.keys(indexers)); // ["namespace"]
 * ```
 */
export type Indexers<T> = Record<string, IndexFunc<T>>;

/**
 * A {@linkcode Store} that also answers "which objects have this index
 * value?". Methods are client-go's `cache.Indexer`, camelCased; an unknown
 * index name throws a `TypeError`.
 *
 * @example
 * ```ts
 * import type { IndexerLike } from "./indexer.ts";
 * import { Indexer } from "./indexer.ts";
 * import { metaNamespaceKeyFunc } from "./key_func.ts";
 * import { namespaceIndexFunc } from "./namespace_index.ts";
 * import type { KubeObject } from "../api/types.ts";
 * const idx: IndexerLike<KubeObject> = new Indexer(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
 * idx.add({ metadata: { name: "a", namespace: "default" } });
 * console.log(idx.indexKeys("namespace", "default")); // ["default/a"]
 * ```
 */
export interface IndexerLike<T extends KubeObject> extends Store<T> {
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
 * Indices stay exact: an update removes the object's old index values
 * (remembered per object, so even an object mutated in place is
 * re-indexed correctly), a delete drops buckets that become empty, and a
 * `replace` builds the new content and indices aside and swaps them in
 * at once. If a key or index function throws, the operation changes
 * nothing. Stored objects are shared, not copied: treat them as read-only.
 *
 * @example
 * ```ts
 * import { Indexer } from "./indexer.ts";
 * import { metaNamespaceKeyFunc } from "./key_func.ts";
 * import { NAMESPACE_INDEX, namespaceIndexFunc } from "./namespace_index.ts";
 * const store = new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
 * store.add({ metadata: { name: "a", namespace: "default" } });
 * store.add({ metadata: { name: "b", namespace: "kube-system" } });
 * console.log(store.byIndex(NAMESPACE_INDEX, "default").map((o) => o.metadata.name)); // ["a"]
 * console.log(store.listIndexFuncValues(NAMESPACE_INDEX)); // ["default", "kube-system"]
 * ```
 */
export class Indexer<T extends KubeObject> implements IndexerLike<T> {
  readonly #keyFunc: KeyFunc<T>;
  readonly #indexers = new Map<string, IndexFunc<T>>();
  #items = new Map<string, Entry<T>>();
  #indices: Indices = new Map();

  /**
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
    const key = this.#keyFunc(obj);
    const values = this.#indexValues(obj, this.#indexers);
    const old = this.#items.get(key);
    if (old) removeFromIndices(this.#indices, key, old.values);
    addToIndices(this.#indices, key, values);
    this.#items.set(key, { obj, values });
  }

  delete(obj: T): void {
    const key = this.#keyFunc(obj);
    const old = this.#items.get(key);
    if (!old) return;
    removeFromIndices(this.#indices, key, old.values);
    this.#items.delete(key);
  }

  list(): T[] {
    return Array.from(this.#items.values(), (entry) => entry.obj);
  }

  listKeys(): string[] {
    return [...this.#items.keys()];
  }

  get(obj: T): T | undefined {
    return this.#items.get(this.#keyFunc(obj))?.obj;
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key)?.obj;
  }

  replace(items: T[], _resourceVersion: string): void {
    const nextItems = new Map<string, Entry<T>>();
    const nextIndices: Indices = new Map();
    for (const name of this.#indexers.keys()) nextIndices.set(name, new Map());
    const errors: unknown[] = [];
    for (const obj of items) {
      let key: string;
      let values: Map<string, string[]>;
      try {
        key = this.#keyFunc(obj);
        values = this.#indexValues(obj, this.#indexers);
      } catch (err) {
        errors.push(err);
        continue;
      }
      const earlier = nextItems.get(key);
      if (earlier) removeFromIndices(nextIndices, key, earlier.values);
      addToIndices(nextIndices, key, values);
      nextItems.set(key, { obj, values });
    }
    this.#items = nextItems;
    this.#indices = nextIndices;
    throwRejected(errors);
  }

  /** Does nothing: a plain indexer has no one to re-deliver objects to. */
  resync(): void {}

  index(indexName: string, obj: T): T[] {
    const indexFunc = this.#indexFunc(indexName);
    const buckets = this.#indices.get(indexName)!;
    const values = checkValues(indexName, indexFunc(obj));
    const keys = new Set<string>();
    for (const value of values) {
      for (const key of buckets.get(value) ?? []) keys.add(key);
    }
    return Array.from(keys, (key) => this.#items.get(key)!.obj);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    this.#indexFunc(indexName);
    return [...(this.#indices.get(indexName)!.get(indexedValue) ?? [])];
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    return this.indexKeys(indexName, indexedValue).map((key) => this.#items.get(key)!.obj);
  }

  listIndexFuncValues(indexName: string): string[] {
    this.#indexFunc(indexName);
    return [...this.#indices.get(indexName)!.keys()];
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
    // Compute every new value first, so that a throwing index function changes nothing.
    const computed = Array.from(this.#items, ([key, entry]) => {
      return { key, entry, values: this.#indexValues(entry.obj, added) };
    });
    for (const [name, indexFunc] of added) {
      this.#indexers.set(name, indexFunc);
      this.#indices.set(name, new Map());
    }
    for (const { key, entry, values } of computed) {
      addToIndices(this.#indices, key, values);
      for (const [name, vals] of values) entry.values.set(name, vals);
    }
  }

  #indexFunc(indexName: string): IndexFunc<T> {
    const indexFunc = this.#indexers.get(indexName);
    if (!indexFunc) throw new TypeError(`Indexer: index "${indexName}" does not exist`);
    return indexFunc;
  }

  #indexValues(obj: T, indexers: Map<string, IndexFunc<T>>): Map<string, string[]> {
    const values = new Map<string, string[]>();
    for (const [name, indexFunc] of indexers) values.set(name, checkValues(name, indexFunc(obj)));
    return values;
  }
}
