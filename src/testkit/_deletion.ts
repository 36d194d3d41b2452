/**
 * Kubernetes' rules for deleting objects that carry finalizers, as the API
 * server's generic registry applies them (`markAsDeleting`,
 * `ShouldDeleteDuringUpdate`, `BeforeUpdate` and `ValidateObjectMetaUpdate`
 * in k8s.io/apiserver and k8s.io/apimachinery):
 *
 * - a DELETE of an object with finalizers only marks it: `deletionTimestamp`
 *   (now, unless already set) and `deletionGracePeriodSeconds: 0`, and
 *   `generation` + 1 the first time when it is above 0; a DELETE of an object
 *   already marked changes nothing;
 * - an update keeps the stored `deletionTimestamp` (an update can neither set,
 *   change nor remove it; setting one on an object not being deleted is 422
 *   "field is immutable") and `deletionGracePeriodSeconds`;
 * - an update of an object being deleted may not add a finalizer (422
 *   Forbidden), and one that leaves no finalizer deletes the object.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObject, ObjectMeta } from "../api/types.ts";
import type { Resource } from "./_resources.ts";
import { type FieldCause, invalidObject } from "./_status.ts";

/** True when the object has at least one finalizer. */
export function hasFinalizers(meta: ObjectMeta): boolean {
  return Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
}

/**
 * What a DELETE makes of an object with finalizers: marked as being deleted
 * at `now` (RFC 3339), or `undefined` when it already is (nothing to write).
 */
export function markAsDeleting(existing: KubeObject, now: string): KubeObject | undefined {
  const meta = existing.metadata;
  if (meta.deletionTimestamp && meta.deletionGracePeriodSeconds === 0) return undefined;
  const marked: ObjectMeta = { ...meta };
  if (!meta.deletionTimestamp) {
    if (typeof meta.generation === "number" && meta.generation > 0) {
      marked.generation = meta.generation + 1;
    }
    marked.deletionTimestamp = now;
  }
  marked.deletionGracePeriodSeconds = 0;
  return { ...existing, metadata: marked };
}

/**
 * The metadata an update stores, given the stored object's: the deletion
 * fields come from the stored object. Throws the server's 422 Invalid when
 * the update sets them on an object that is not being deleted, or adds a
 * finalizer to one that is.
 */
export function deletionFieldsForUpdate(
  resource: Pick<Resource, "kind" | "group">,
  existing: ObjectMeta,
  input: ObjectMeta,
): ObjectMeta {
  const meta: ObjectMeta = { ...input };
  const causes: FieldCause[] = [];
  if (existing.deletionTimestamp) {
    meta.deletionTimestamp = existing.deletionTimestamp;
    const known = new Set(existing.finalizers ?? []);
    const added = [...new Set(input.finalizers ?? [])].filter((f) => !known.has(f)).sort();
    if (added.length > 0) {
      causes.push({
        reason: "FieldValueForbidden",
        field: "metadata.finalizers",
        message: "Forbidden: no new finalizers can be added if the object is being deleted, " +
          `found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(", ")}}`,
      });
    }
  } else if (input.deletionTimestamp) {
    causes.push(immutable("deletionTimestamp", input.deletionTimestamp));
  }
  const grace = existing.deletionGracePeriodSeconds;
  if (grace !== undefined && grace !== null && input.deletionGracePeriodSeconds == null) {
    meta.deletionGracePeriodSeconds = grace;
  } else if ((meta.deletionGracePeriodSeconds ?? null) !== (grace ?? null)) {
    causes.push(immutable("deletionGracePeriodSeconds", meta.deletionGracePeriodSeconds));
  }
  if (causes.length > 0) {
    const status = invalidObject(resource.kind, resource.group, input.name ?? "", causes);
    throw new KubeStatusError({ code: 422, status });
  }
  return meta;
}

/**
 * True when an update ends a deletion: the stored object is being deleted
 * (with no grace period left) and the update leaves no finalizer.
 */
export function endsDeletion(existing: ObjectMeta, updated: ObjectMeta): boolean {
  if (hasFinalizers(updated) || !existing.deletionTimestamp) return false;
  const grace = existing.deletionGracePeriodSeconds;
  return grace === undefined || grace === null || grace === 0;
}

function immutable(field: string, value: unknown): FieldCause {
  return {
    reason: "FieldValueInvalid",
    field: `metadata.${field}`,
    message: `Invalid value: ${JSON.stringify(value)}: field is immutable`,
  };
}
