import type { KubeObjectLike } from "../api/types.ts";

/**
 * True when `listed` is the same state of the same object as `held`: both
 * name the same non-empty `metadata.uid` and the same non-empty
 * `metadata.resourceVersion` (the API server gives every write of an object
 * a new version, and a re-created object a new uid). Anything else,
 * including a `listed` that is not an object, is false.
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
 * The object of `items` (keyed by `keyFunc`) that `listed` is the same
 * version of, or `undefined`; never throws (a `listed` without a key has
 * no held copy).
 */
export function heldCopy<T extends KubeObjectLike>(
  items: Map<string, T>,
  keyFunc: (obj: T) => string,
  listed: T,
): T | undefined {
  if (items.size === 0) return undefined;
  let held: T | undefined;
  try {
    held = items.get(keyFunc(listed));
  } catch {
    return undefined;
  }
  return held !== undefined && sameVersion(held, listed) ? held : undefined;
}
