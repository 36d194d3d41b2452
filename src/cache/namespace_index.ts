/**
 * The namespace index, which most indexers carry.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "./deleted_final_state_unknown.ts";
import { splitKey } from "./_namespaced_map.ts";

/**
 * The conventional name of the namespace index (client-go's
 * `cache.NamespaceIndex`).
 */
export const NAMESPACE_INDEX = "namespace";

/**
 * Indexes an object by its namespace: `[metadata.namespace]`, or `[""]`
 * for a cluster-scoped object, so that every object is in exactly one
 * bucket (client-go's `cache.MetaNamespaceIndexFunc`).
 *
 * A {@linkcode DeletedFinalStateUnknown} tombstone (stored in an indexer as
 * its key function allows) is indexed under the namespace of its `key`
 * (`"ns"` for `"ns/name"`, `""` for a key without `/`), where an
 * `Indexer` keyed by `metaNamespaceKeyFunc` holds it, rather than failing
 * as client-go's function does on a tombstone.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DeletedFinalStateUnknown, namespaceIndexFunc } from "../../mod.ts";
 *
 * assert.deepEqual(namespaceIndexFunc({ metadata: { name: "a", namespace: "web" } }), ["web"]);
 * assert.deepEqual(namespaceIndexFunc({ metadata: { name: "node-1" } }), [""]);
 * const tombstone = new DeletedFinalStateUnknown("web/a", {});
 * assert.deepEqual(namespaceIndexFunc(tombstone as never), ["web"]);
 * ```
 */
export function namespaceIndexFunc<T extends KubeObjectLike = KubeObject>(obj: T): string[] {
  return [namespaceOf(obj)];
}

/**
 * The one value of {@linkcode namespaceIndexFunc} for `obj`, without its
 * array. Internal (the `Lister` filters by it).
 *
 * @ignore
 */
export function namespaceOf(obj: KubeObjectLike): string {
  if (obj instanceof DeletedFinalStateUnknown) return splitKey(obj.key)[0];
  return obj.metadata?.namespace ?? "";
}
