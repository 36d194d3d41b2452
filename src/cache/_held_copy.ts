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

/** Deeper than this, two values are taken for different (no recursion without a bound). */
const MAX_DEPTH = 256;

/**
 * True when `held` and `listed` are the same object content: plain objects
 * and arrays of equal JSON values, member by member (in any order). At the
 * top level, `kind` and `apiVersion` are compared only when both have them:
 * the API server leaves them out of list items but not out of watch events
 * (nor a streaming list's initial events). The same uid and resourceVersion
 * do not prove the same content: the API server may serve a changed object
 * at the same version without a write (a default added to a CRD's schema or
 * by an upgrade, applied when reading; a changed conversion webhook; an etcd
 * restored without bumping its revisions), and a relist must bring that in.
 * Values nested deeper than 256 levels, and objects that are not plain
 * (a `Map`, a `Date`, a class instance), are taken for different.
 */
export function sameContent(held: unknown, listed: unknown): boolean {
  if (!isPlainObject(held) || !isPlainObject(listed)) return false;
  let members = 0;
  for (const key in listed) {
    if (!Object.hasOwn(listed, key)) continue;
    if ((key === "kind" || key === "apiVersion") && !Object.hasOwn(held, key)) continue;
    members++;
    if (!Object.hasOwn(held, key) || !equalJson(held[key], listed[key], 1)) return false;
  }
  for (const key in held) {
    if (!Object.hasOwn(held, key)) continue;
    if ((key === "kind" || key === "apiVersion") && !Object.hasOwn(listed, key)) continue;
    members--;
  }
  return members === 0;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Deep equality of two JSON values (plain objects member by member, in any order). */
function equalJson(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return false; // different primitives (NaN never comes from JSON)
  }
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalJson(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  let count = 0;
  for (const key in b) {
    if (!Object.hasOwn(b, key)) continue;
    count++;
    if (!Object.hasOwn(a, key) || !equalJson(a[key], b[key], depth + 1)) return false;
  }
  for (const key in a) if (Object.hasOwn(a, key)) count--;
  return count === 0;
}

/**
 * The object of `items` (keyed by `keyFunc`) that `listed` is an unchanged
 * copy of (same version and content), or `undefined`; never throws (a
 * `listed` without a key has no held copy).
 */
export function heldCopy<T extends KubeObjectLike>(
  items: Map<string, T>,
  keyFunc: (obj: T) => string,
  listed: T,
): T | undefined {
  if (items.size === 0) return undefined;
  try {
    const held = items.get(keyFunc(listed));
    if (held === undefined || !sameVersion(held, listed)) return undefined;
    return sameContent(held, listed) ? held : undefined;
  } catch {
    return undefined;
  }
}
