/**
 * Listers: typed reads from an informer's cache.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { IndexerLike } from "../cache/indexer.ts";
import { NAMESPACE_INDEX, namespaceOf } from "../cache/namespace_index.ts";
import { namespacedGet } from "../cache/_keyed_update.ts";
import { type LabelSelector, labelSelector, type LabelSelectorSpec } from "./label_selector.ts";

/**
 * The read-only view of a cache that listers and informers hand out.
 */
export type ReadonlyIndexer<T extends KubeObjectLike = KubeObject> = Omit<
  IndexerLike<T>,
  "add" | "update" | "delete" | "replace" | "resync" | "addIndexers"
>;

/**
 * Options of {@linkcode Lister.list}.
 */
export interface ListerListOptions {
  /** Only this namespace (`""`: cluster-scoped objects). Default: every namespace. */
  namespace?: string;
  /** Only objects whose labels match. Default: everything. */
  labelSelector?: string | LabelSelectorSpec | LabelSelector;
}

/**
 * Reads objects from a cache keyed by `metaNamespaceKeyFunc` (client-go's
 * generated listers). Served from memory, no I/O; uses the namespace index
 * when the cache has one. Returned objects are shared: treat them as
 * read-only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Indexer, Lister, metaNamespaceKeyFunc, namespaceIndexFunc } from "../../mod.ts";
 *
 * // an informer's cache (`informer.indexer`), or any indexer
 * const cache = new Indexer(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
 * cache.add({ metadata: { name: "a", namespace: "web", labels: { tier: "front" } } });
 * cache.add({ metadata: { name: "b", namespace: "web", labels: { tier: "back" } } });
 * cache.add({ metadata: { name: "c", namespace: "db", labels: { tier: "back" } } });
 * const lister = new Lister(cache);
 * assert.equal(lister.get("web", "a")?.metadata.name, "a");
 * assert.deepEqual(
 *   lister.list({ namespace: "web", labelSelector: "tier=back" }).map((o) => o.metadata.name),
 *   ["b"],
 * );
 * assert.equal(lister.list({ labelSelector: { matchLabels: { tier: "back" } } }).length, 2);
 * ```
 */
export class Lister<T extends KubeObjectLike = KubeObject> {
  readonly #cache: ReadonlyIndexer<T>;
  /** The library's own indexers find an object by namespace and name without a key string. */
  readonly #direct: boolean;

  /**
   * Creates a lister reading `cache` (for example an informer's store); it copies nothing.
   *
   * @throws {TypeError} when `cache` is not an indexer.
   */
  constructor(cache: ReadonlyIndexer<T>) {
    if (!cache || typeof cache.getByKey !== "function" || typeof cache.byIndex !== "function") {
      throw new TypeError("Lister: cache must be an Indexer");
    }
    this.#cache = cache;
    this.#direct = typeof (cache as Partial<NamespacedGetter<T>>)[namespacedGet] === "function";
  }

  /** The object `namespace/name` (or `name` when `namespace` is `""`). */
  get(namespace: string, name: string): T | undefined {
    if (this.#direct) {
      return (this.#cache as unknown as NamespacedGetter<T>)[namespacedGet](namespace, name);
    }
    return this.#cache.getByKey(namespace ? `${namespace}/${name}` : name);
  }

  /**
   * The objects in `namespace` (or all) whose labels match `labelSelector`.
   * @throws {TypeError} when the selector is invalid.
   */
  list(options: ListerListOptions = {}): T[] {
    const { namespace, labelSelector: selector } = options;
    const sel = selector === undefined ? undefined : labelSelector(selector);
    let objects: T[];
    if (namespace === undefined) objects = this.#cache.list();
    else if (NAMESPACE_INDEX in this.#cache.getIndexers()) {
      objects = this.#cache.byIndex(NAMESPACE_INDEX, namespace);
    } else objects = this.#cache.list().filter((o) => namespaceOf(o) === namespace);
    return !sel || sel.empty ? objects : objects.filter((o) => sel.matches(o.metadata?.labels));
  }
}

/** An indexer of this library: see `_keyed_update.ts`. */
interface NamespacedGetter<T> {
  [namespacedGet](namespace: string, name: string): T | undefined;
}
