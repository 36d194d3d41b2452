/**
 * Transforms: applied to every object before it enters an informer's cache.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";

/**
 * Rewrites an object before an informer stores it; the cache, listers and
 * handlers only ever see the result. It may modify the object in place and
 * return it (the object is fresh from the wire and not shared yet), and it
 * must keep `metadata.name`, `metadata.namespace` and
 * `metadata.resourceVersion`. A throw is reported through `onError` (phase
 * `"store"`) and that object is skipped: the cache keeps its previous state.
 *
 * @example
 * ```ts
 * import type { KubeObject, TransformFunc } from "../../mod.ts";
 * const onlyMeta: TransformFunc<KubeObject> = (obj) => ({ kind: obj.kind, metadata: obj.metadata });
 * console.log(onlyMeta({ kind: "Secret", metadata: { name: "s" }, data: { k: "djE=" } })); // { kind: "Secret", metadata: { name: "s" } }
 * ```
 */
export type TransformFunc<T extends KubeObject> = (obj: T) => T;

/**
 * A {@linkcode TransformFunc} that deletes `metadata.managedFields`, often
 * the largest part of an object and rarely needed by controllers (client-go
 * users do the same with `SetTransform`).
 *
 * @example
 * ```ts
 * import { dropManagedFields } from "../../mod.ts";
 * const obj = { metadata: { name: "a", managedFields: [{ manager: "kubectl" }] } };
 * console.log(dropManagedFields(obj)); // { metadata: { name: "a" } }
 * ```
 */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if (obj?.metadata && "managedFields" in obj.metadata) delete obj.metadata.managedFields;
  return obj;
}
