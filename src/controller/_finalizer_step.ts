/**
 * What {@linkcode finalizer} does with an object, decided from its metadata
 * alone, and the JSON patches it sends.
 *
 * @module
 */
import type { JsonPatchOperation } from "../transport/resource_client.ts";

/**
 * The next step for an object and a finalizer name (kube-rs's
 * `FinalizerState`):
 * - `"add"`: not being deleted, finalizer absent: send `patch` (adds it);
 * - `"apply"`: not being deleted, finalizer present: run `apply`;
 * - `"cleanup"`: being deleted, finalizer present: run `cleanup`, then send
 *   `removal` (removes it);
 * - `"none"`: being deleted, finalizer absent: nothing to do.
 */
export type FinalizerStep =
  | { kind: "add"; patch: JsonPatchOperation[] }
  | { kind: "apply" }
  | { kind: "cleanup"; removal: JsonPatchOperation[] }
  | { kind: "none" };

/** The metadata fields the step reads. */
export interface FinalizerMeta {
  resourceVersion?: string;
  deletionTimestamp?: unknown;
  finalizers?: readonly string[];
}

/**
 * The step for an object with this metadata.
 *
 * The add patch is guarded by a `test` of `metadata.resourceVersion`: any
 * change since the object was read fails it (422), so a finalizer is never
 * added twice nor to an object whose deletion has begun. The array is
 * created when absent or empty, else the name is appended. The removal
 * patch is guarded by a `test` of the whole `metadata.finalizers` array, so
 * that it removes exactly our entry: if another finalizer was added or
 * removed meanwhile, the index could name someone else's, and the test fails
 * instead. Changes elsewhere in the object do not fail it.
 *
 * @throws {TypeError} when an add is needed and `resourceVersion` is missing.
 */
export function finalizerStep(meta: FinalizerMeta, name: string): FinalizerStep {
  const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
  const index = finalizers.indexOf(name);
  const deleting = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null &&
    meta.deletionTimestamp !== "";
  if (deleting) {
    if (index < 0) return { kind: "none" };
    return {
      kind: "cleanup",
      removal: [
        { op: "test", path: "/metadata/finalizers", value: [...finalizers] },
        { op: "remove", path: `/metadata/finalizers/${index}` },
      ],
    };
  }
  if (index >= 0) return { kind: "apply" };
  const rv = meta.resourceVersion;
  if (typeof rv !== "string" || rv === "") {
    throw new TypeError(
      "finalizer: the object has no metadata.resourceVersion (pass an object read from the API server)",
    );
  }
  return {
    kind: "add",
    patch: [
      { op: "test", path: "/metadata/resourceVersion", value: rv },
      finalizers.length === 0
        ? { op: "add", path: "/metadata/finalizers", value: [name] }
        : { op: "add", path: "/metadata/finalizers/-", value: name },
    ],
  };
}

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * True for a Kubernetes qualified name, what the API server takes as a
 * finalizer: an optional DNS subdomain prefix (at most 253 characters) and
 * `/`, then a name of at most 63 characters: alphanumerics, `-`, `_`, `.`,
 * starting and ending with an alphanumeric (`example.com/cleanup`).
 */
export function isQualifiedName(value: string): boolean {
  const parts = value.split("/");
  if (parts.length > 2) return false;
  const name = parts.at(-1)!;
  if (name.length > 63 || !NAME_PART.test(name)) return false;
  if (parts.length === 1) return true;
  const prefix = parts[0];
  return prefix.length > 0 && prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix);
}
