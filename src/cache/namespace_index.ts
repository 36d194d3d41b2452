/**
 * The namespace index, which most indexers carry.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";

/**
 * The conventional name of the namespace index (client-go's
 * `cache.NamespaceIndex`).
 */
export const NAMESPACE_INDEX = "namespace";

/**
 * Indexes an object by its namespace: `[metadata.namespace]`, or `[""]`
 * for a cluster-scoped object, so that every object is in exactly one
 * bucket (client-go's `cache.MetaNamespaceIndexFunc`).
 */
export function namespaceIndexFunc<T extends KubeObjectLike = KubeObject>(obj: T): string[] {
  return [obj.metadata?.namespace ?? ""];
}
