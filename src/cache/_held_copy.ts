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

/** Deeper than this, two values are not compared (no recursion without a bound). */
const MAX_DEPTH = 256;

/**
 * The most values one comparison visits: beyond, the rest is not compared.
 * An object built by code can share a part between members (or hold a
 * cycle), which a walk would visit once per path: exponentially often.
 * JSON.parse never shares parts; the largest object etcd stores (1.5 MiB)
 * has fewer values than this.
 */
const MAX_VALUES = 2_000_000;

/** The same JSON content. */
const SAME = 0;
/** Provably different JSON content. */
const DIFFERENT = 1;
/** Not comparable: a value that is not plain JSON, nested too deep, or past the budget. */
const UNKNOWN = 2;
type Comparison = typeof SAME | typeof DIFFERENT | typeof UNKNOWN;

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
 * Values nested deeper than 256 levels, objects that are not plain (a
 * `Map`, a `Date`, a class instance), and anything past 2,000,000 values
 * are not compared: false (it stops at the first such value).
 */
export function sameContent(held: unknown, listed: unknown): boolean {
  return new Comparer(true).content(held, listed) === SAME;
}

/**
 * True only when `held` and `listed` provably differ in content (as in
 * {@linkcode sameContent}): a member differs where both are JSON values, or
 * one has a member the other lacks. Content that cannot be compared (values
 * that are not plain, nested deeper than 256 levels, or past 2,000,000
 * values) with no provable difference beside it is not a difference: false.
 */
export function contentDiffers(held: unknown, listed: unknown): boolean {
  return new Comparer(false).content(held, listed) === DIFFERENT;
}

/** One comparison: its budget of values, and whether it stops at the first unknown. */
class Comparer {
  #left = MAX_VALUES;
  readonly #stopAtUnknown: boolean;

  constructor(stopAtUnknown: boolean) {
    this.#stopAtUnknown = stopAtUnknown;
  }

  content(held: unknown, listed: unknown): Comparison {
    if (!isPlainObject(held) || !isPlainObject(listed)) return UNKNOWN;
    let members = 0;
    let result: Comparison = SAME;
    for (const key in listed) {
      if (!Object.hasOwn(listed, key)) continue;
      if ((key === "kind" || key === "apiVersion") && !Object.hasOwn(held, key)) continue;
      members++;
      if (!Object.hasOwn(held, key)) return DIFFERENT;
      const c = this.#json(held[key], listed[key], 1);
      if (c === DIFFERENT) return DIFFERENT;
      if (c === UNKNOWN) {
        if (this.#stopAtUnknown) return UNKNOWN;
        result = UNKNOWN;
      }
    }
    for (const key in held) {
      if (!Object.hasOwn(held, key)) continue;
      if ((key === "kind" || key === "apiVersion") && !Object.hasOwn(listed, key)) continue;
      members--;
    }
    return members === 0 ? result : DIFFERENT;
  }

  /**
   * Compares two JSON values (plain objects member by member, in any
   * order): a provable difference wins over a part that cannot be compared.
   */
  #json(a: unknown, b: unknown, depth: number): Comparison {
    if (a === b) return SAME;
    if (--this.#left < 0 || depth > MAX_DEPTH) return UNKNOWN;
    // an object that is not plain may stand for any JSON value (a Date for a string)
    if (isOpaque(a) || isOpaque(b)) return UNKNOWN;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
      return DIFFERENT; // different primitives, or a primitive and an object (NaN never comes from JSON)
    }
    if (Array.isArray(a) !== Array.isArray(b)) return DIFFERENT;
    let result: Comparison = SAME;
    if (Array.isArray(a)) {
      const bs = b as unknown[];
      if (a.length !== bs.length) return DIFFERENT;
      for (let i = 0; i < a.length; i++) {
        const c = this.#json(a[i], bs[i], depth + 1);
        if (c === DIFFERENT) return DIFFERENT;
        if (c === UNKNOWN) {
          if (this.#stopAtUnknown) return UNKNOWN;
          result = UNKNOWN;
        }
      }
      return result;
    }
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    let count = 0;
    for (const key in bo) {
      if (!Object.hasOwn(bo, key)) continue;
      count++;
      if (!Object.hasOwn(ao, key)) return DIFFERENT;
      const c = this.#json(ao[key], bo[key], depth + 1);
      if (c === DIFFERENT) return DIFFERENT;
      if (c === UNKNOWN) {
        if (this.#stopAtUnknown) return UNKNOWN;
        result = UNKNOWN;
      }
    }
    for (const key in ao) if (Object.hasOwn(ao, key)) count--;
    return count === 0 ? result : DIFFERENT;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** An object that is neither plain nor an array (a Date, a Map, a class instance). */
function isOpaque(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !isPlainObject(v);
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
    return unchangedCopy(items.get(keyFunc(listed)), listed);
  } catch {
    return undefined;
  }
}

/**
 * `held` when `listed` is an unchanged copy of it (same version and
 * content), else `undefined`; never throws.
 */
export function unchangedCopy<T extends KubeObjectLike>(
  held: T | undefined,
  listed: T,
): T | undefined {
  try {
    if (held === undefined || !sameVersion(held, listed)) return undefined;
    return sameContent(held, listed) ? held : undefined;
  } catch {
    return undefined;
  }
}
