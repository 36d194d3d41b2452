import type { KubeObjectLike } from "../api/types.ts";

/**
 * True when `listed` is the same version of the same object as `held`:
 * both name the same non-empty `metadata.uid` and the same non-empty
 * `metadata.resourceVersion`. Anything else, including a `listed` that is
 * not an object, is false.
 */
export function sameVersion(held: KubeObjectLike, listed: unknown): boolean {
  const a = held.metadata;
  if (a === undefined || a === null || typeof listed !== "object" || listed === null) return false;
  const b = (listed as KubeObjectLike).metadata;
  if (typeof b !== "object" || b === null) return false;
  const rv = a.resourceVersion;
  const uid = a.uid;
  return typeof rv === "string" && rv !== "" && rv === b.resourceVersion &&
    typeof uid === "string" && uid !== "" && uid === b.uid;
}

/**
 * True when `held` and `listed` are the same object content: equal JSON
 * values, member by member (in any order). At the top level, a `kind` or
 * `apiVersion` that `listed` lacks is not compared: the API server leaves
 * them out of list items, and a held copy that came from a watch event
 * names them. The same uid and resourceVersion do not prove the same
 * content: the API server may serve a changed object at the same version
 * without a write (a default added to a CRD's schema or by an upgrade,
 * applied when reading; a changed conversion webhook; an etcd restored
 * without bumping its revisions), and a relist must bring that in.
 */
export function sameContent(held: unknown, listed: unknown): boolean {
  if (typeof held !== "object" || held === null || typeof listed !== "object" || listed === null) {
    return false;
  }
  if (Array.isArray(held) || Array.isArray(listed)) return false;
  const a = held as Record<string, unknown>;
  const b = listed as Record<string, unknown>;
  let members = 0;
  for (const key in b) {
    if (!Object.hasOwn(b, key)) continue;
    members++;
    if (!Object.hasOwn(a, key) || !equalJson(a[key], b[key])) return false;
  }
  let heldMembers = 0;
  for (const key in a) {
    if (!Object.hasOwn(a, key)) continue;
    if ((key === "kind" || key === "apiVersion") && !Object.hasOwn(b, key)) continue;
    heldMembers++;
  }
  return heldMembers === members;
}

/** Deep equality of two JSON values (objects compared member by member, in any order). */
function equalJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return false; // different primitives (NaN never comes from JSON)
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in y) {
    if (!Object.hasOwn(y, key)) continue;
    count++;
    if (!Object.hasOwn(x, key) || !equalJson(x[key], y[key])) return false;
  }
  for (const key in x) if (Object.hasOwn(x, key)) count--;
  return count === 0;
}

/**
 * The object of `items` (keyed by `keyFunc`) that `listed` is an unchanged
 * copy of, or `undefined`; never throws (a `listed` without a key has no
 * held copy). `comparable` gives what to compare with the held object (the
 * listed object itself, or for a transforming store its transformed form):
 * called only for a held object of the same version, it may throw (then
 * there is no held copy).
 */
export function heldCopy<T extends KubeObjectLike>(
  items: Map<string, T>,
  keyFunc: (obj: T) => string,
  listed: T,
  comparable: (listed: T) => unknown = (x) => x,
): T | undefined {
  if (items.size === 0) return undefined;
  try {
    const held = items.get(keyFunc(listed));
    if (held === undefined || !sameVersion(held, listed)) return undefined;
    return sameContent(held, comparable(listed)) ? held : undefined;
  } catch {
    return undefined;
  }
}
