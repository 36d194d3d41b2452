/**
 * Internals of `Indexer`: one index, kept compact. Most objects have one
 * value per index (a namespace), and a value with one object stores the
 * bare key, a collection only where there are several; what an object was
 * filed under is recomputed from it, not stored. At 100k objects with the
 * namespace index this is about 20 bytes per object (it was 300).
 *
 * @module
 */

/** What an object is filed under in one index: one value, or several (never an empty array). */
export type Filed = string | readonly string[];

/** No values. */
export const NONE: readonly string[] = Object.freeze([]);

/**
 * Checks an index function's result and returns its distinct values: the
 * bare string when there is one (the same string the object holds, so it
 * costs nothing), `NONE` when there are none.
 */
export function checkValues(indexName: string, values: unknown): Filed {
  if (!Array.isArray(values)) throw notStrings(indexName);
  if (values.length === 1 && typeof values[0] === "string") return values[0];
  if (values.length === 0) return NONE;
  if (!values.every((v) => typeof v === "string")) throw notStrings(indexName);
  const distinct = [...new Set<string>(values)];
  return distinct.length === 1 ? distinct[0] : distinct;
}

function notStrings(indexName: string): TypeError {
  return new TypeError(`Indexer: index function "${indexName}" must return an array of strings`);
}

/** The values of a {@linkcode Filed}, as a list. */
export function valuesOf(filed: Filed): readonly string[] {
  return typeof filed === "string" ? [filed] : filed;
}

/**
 * One index: value → keys. What a key was filed under is not remembered
 * (that cost about 30 bytes per object): as in client-go, the caller
 * recomputes it from the stored object. Should a stored object have been
 * mutated in place so that its recomputed values are not where its key is,
 * the key is searched for in every bucket and removed there. Empty buckets
 * are always deleted.
 */
export class IndexTable {
  /** value → one key, or a set of several */
  readonly #buckets = new Map<string, string | Set<string>>();

  /** Files `key` under `values` (the key must not be filed yet). */
  add(key: string, values: Filed): void {
    if (typeof values === "string") this.#file(key, values);
    else for (const value of values) this.#file(key, value);
  }

  /**
   * Removes `key` from `values`, what it was filed under as far as the
   * caller knows (`undefined`: not known). A value whose bucket does not
   * hold the key means the caller's knowledge is stale: every bucket is
   * searched instead.
   */
  remove(key: string, values: Filed | undefined): void {
    if (values === undefined) return this.#scrub(key);
    for (const value of valuesOf(values)) {
      if (!this.#unfile(key, value)) return this.#scrub(key);
    }
  }

  /** Moves `key` from `was` (as in `remove`) to `values`; nothing to do when they are the same. */
  set(key: string, was: Filed | undefined, values: Filed): void {
    if (was !== undefined && sameValues(was, values) && this.#holds(key, values)) return;
    this.remove(key, was);
    this.add(key, values);
  }

  /** The keys filed under `value`. */
  keys(value: string): string[] {
    const bucket = this.#buckets.get(value);
    return bucket === undefined ? [] : typeof bucket === "string" ? [bucket] : [...bucket];
  }

  /** Every value with at least one key. */
  values(): string[] {
    return [...this.#buckets.keys()];
  }

  #file(key: string, value: string): void {
    const bucket = this.#buckets.get(value);
    if (bucket === undefined) this.#buckets.set(value, key);
    else if (typeof bucket === "string") {
      if (bucket !== key) this.#buckets.set(value, new Set([bucket, key]));
    } else bucket.add(key);
  }

  /** Removes `key` from the bucket of `value`; false when it was not there. */
  #unfile(key: string, value: string): boolean {
    const bucket = this.#buckets.get(value);
    if (bucket === undefined) return false;
    if (typeof bucket === "string") {
      if (bucket !== key) return false;
      this.#buckets.delete(value);
      return true;
    }
    if (!bucket.delete(key)) return false;
    if (bucket.size === 1) this.#buckets.set(value, bucket.values().next().value!);
    return true;
  }

  #holds(key: string, values: Filed): boolean {
    if (typeof values === "string") return this.#has(values, key); // (no array per event)
    for (const value of values) if (!this.#has(value, key)) return false;
    return true;
  }

  /** Whether `key` is filed under `value`. */
  #has(value: string, key: string): boolean {
    const bucket = this.#buckets.get(value);
    return bucket !== undefined && (typeof bucket === "string" ? bucket === key : bucket.has(key));
  }

  /** Removes `key` from every bucket (a stored object was mutated in place). */
  #scrub(key: string): void {
    for (const value of [...this.#buckets.keys()]) this.#unfile(key, value);
  }
}

function sameValues(a: Filed, b: Filed): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
