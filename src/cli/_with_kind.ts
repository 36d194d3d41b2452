/**
 * A list's items come without `apiVersion` and `kind`: put them back, as
 * kubectl does before printing, first in the object as the API server
 * writes them.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";

/** `object` with the resource's `apiVersion` and `kind` where it has none. */
export function withKindOf<T extends KubeObjectLike>(
  resource: { apiVersion: string; kind: string },
  object: T,
): T {
  if (object.apiVersion && object.kind) return object;
  return { apiVersion: resource.apiVersion, kind: resource.kind, ...object };
}
