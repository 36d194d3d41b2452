/**
 * Store keys: `"namespace/name"` for namespaced objects, `"name"` for
 * cluster-scoped ones, as client-go's `MetaNamespaceKeyFunc`.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "./deleted_final_state_unknown.ts";
import { KeyError } from "./key_error.ts";

/**
 * Computes the store key of an object. It must be pure: the same object
 * always gives the same key. It throws (a {@linkcode KeyError}) when the
 * object has no key.
 */
export type KeyFunc<T> = (obj: T) => string;

/**
 * The key of a Kubernetes object: `"namespace/name"`, or `"name"` when
 * `metadata.namespace` is absent or empty (cluster-scoped objects). A
 * {@linkcode DeletedFinalStateUnknown} tombstone gives its own `key`, so
 * this function can key both live objects and tombstones.
 *
 * @typeParam T The object type (any {@linkcode KubeObjectLike}: untyped,
 *   `kubernetes-types` or `@kubernetes/client-node` objects); inferred.
 * @throws {KeyError} when the object is not an object, has no `metadata`,
 * has no non-empty string `metadata.name`, has a name containing `/`, or a
 * `metadata.namespace` that is not a string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KeyError, metaNamespaceKeyFunc, splitMetaNamespaceKey } from "../../mod.ts";
 *
 * assert.equal(
 *   metaNamespaceKeyFunc({ metadata: { name: "cm1", namespace: "default" } }),
 *   "default/cm1",
 * );
 * assert.equal(metaNamespaceKeyFunc({ metadata: { name: "node-1" } }), "node-1"); // cluster-scoped
 * assert.deepEqual(splitMetaNamespaceKey("default/cm1"), { namespace: "default", name: "cm1" });
 * assert.throws(() => metaNamespaceKeyFunc({ metadata: { namespace: "default" } }), KeyError);
 * ```
 */
export function metaNamespaceKeyFunc<T extends KubeObjectLike = KubeObject>(
  obj: T | DeletedFinalStateUnknown,
): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  const name = metaName(obj);
  const namespace = (obj.metadata as { namespace?: string }).namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/**
 * The `metadata.name` of an object {@linkcode metaNamespaceKeyFunc} can key
 * (not a tombstone), or the same {@linkcode KeyError} it throws. Internal:
 * the `Indexer` stores such objects by namespace and name, without a key.
 *
 * @ignore
 */
export function metaName(obj: unknown): string {
  if (typeof obj !== "object" || obj === null) {
    const got = obj === null ? "null" : typeof obj;
    throw new KeyError(`cannot compute a key: expected a Kubernetes object, got ${got}`);
  }
  const meta: unknown = (obj as { metadata?: unknown }).metadata;
  if (typeof meta !== "object" || meta === null) {
    throw new KeyError(`cannot compute the key of a ${kindOf(obj)}: metadata is missing`);
  }
  const { name, namespace } = meta as { name?: unknown; namespace?: unknown };
  if (namespace !== undefined && typeof namespace !== "string") {
    throw new KeyError(
      `cannot compute the key of a ${kindOf(obj)}: metadata.namespace is not a string`,
    );
  }
  if (typeof name === "string" && name !== "" && !name.includes("/")) return name;
  // (messages are built only for a bad object: this runs once per object listed)
  const kind = kindOf(obj);
  const where = namespace ? ` in namespace "${namespace}"` : "";
  if (name === undefined || name === "") {
    throw new KeyError(`cannot compute the key of a ${kind}${where}: metadata.name is missing`);
  }
  if (typeof name !== "string") {
    throw new KeyError(
      `cannot compute the key of a ${kind}${where}: metadata.name is not a string`,
    );
  }
  throw new KeyError(`cannot compute the key of a ${kind}${where}: metadata.name contains "/"`);
}

/**
 * client-go's name for a key function that accepts tombstones: returns a
 * {@linkcode DeletedFinalStateUnknown}'s `key`, otherwise the
 * {@linkcode metaNamespaceKeyFunc} key. Here it is the same function as
 * `metaNamespaceKeyFunc`, which already handles tombstones; use whichever
 * name reads better.
 */
export const deletionHandlingMetaNamespaceKeyFunc: <T extends KubeObjectLike = KubeObject>(
  obj: T | DeletedFinalStateUnknown,
) => string = metaNamespaceKeyFunc;

/**
 * The parts of a store key, as returned by {@linkcode splitMetaNamespaceKey}.
 */
export interface NamespacedName {
  /** The namespace, or `""` for a cluster-scoped object. */
  namespace: string;
  /** The object's name (never empty). */
  name: string;
}

/**
 * Splits a key made by {@linkcode metaNamespaceKeyFunc} back into its
 * namespace and name. `"name"` gives namespace `""`.
 *
 * Stricter than client-go's `SplitMetaNamespaceKey`, which accepts `""`
 * and `"/name"`: every key this library makes has a non-empty name, and a
 * non-empty namespace before any `/`.
 *
 * @throws {TypeError} when the key is not a string, is empty, has more than
 * one `/`, or has an empty namespace or name around its `/`.
 */
export function splitMetaNamespaceKey(key: string): NamespacedName {
  if (typeof key !== "string") {
    throw new TypeError(
      `invalid key: expected a string, got ${key === null ? "null" : typeof key}`,
    );
  }
  const parts = key.split("/");
  if (parts.length === 1 && key !== "") return { namespace: "", name: key };
  if (parts.length === 2 && parts[0] !== "" && parts[1] !== "") {
    return { namespace: parts[0], name: parts[1] };
  }
  throw new TypeError(`invalid key ${JSON.stringify(key)}: expected "namespace/name" or "name"`);
}

/** The object's kind for a message (`"object"` when it has none). */
function kindOf(obj: { kind?: unknown }): string {
  return typeof obj.kind === "string" && obj.kind !== "" ? obj.kind : "object";
}
