/**
 * The namespace index, which most indexers carry.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";

/**
 * The conventional name of the namespace index (client-go's
 * `cache.NamespaceIndex`).
 *
 * @example
 * ```ts
 * import { Indexer } from "./indexer.ts";
 * import { metaNamespaceKeyFunc } from "./key_func.ts";
 * import { NAMESPACE_INDEX, namespaceIndexFunc } from "./namespace_index.ts";
 * const store = new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
 * store.add({ metadata: { name: "a", namespace: "default" } });
 * console.log(store.indexKeys(NAMESPACE_INDEX, "default")); // ["default/a"]
 * ```
 */
export const NAMESPACE_INDEX = "namespace";

/**
 * Indexes an object by its namespace: `[metadata.namespace]`, or `[""]`
 * for a cluster-scoped object, so that every object is in exactly one
 * bucket (client-go's `cache.MetaNamespaceIndexFunc`).
 *
 * @example
 * ```ts
 * import { namespaceIndexFunc } from "./namespace_index.ts";
 * console.log(namespaceIndexFunc({ metadata: { name: "a", namespace: "default" } })); // ["default"]
 * console.log(namespaceIndexFunc({ metadata: { name: "node-1" } })); // [""]
 * ```
 */
export function namespaceIndexFunc(obj: KubeObject): string[] {
  return [obj.metadata.namespace ?? ""];
}
