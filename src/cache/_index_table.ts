/**
 * Internals of `Indexer`: one index, kept compact. Most objects have one
 * value per index (a namespace) and most values few objects, so both
 * directions store a bare string where there is one, and a collection only
 * where there are several: at 100k objects this is the difference between
 * about 30 and 300 bytes per object.
 *
 * @module
 */

/** What an object is filed under in one index: one value, or several (never an empty array). */
export type Filed = string | readonly string[];

const NONE: readonly string[] = Object.freeze([]);

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
 * One index: value → keys, and key → the values the key was filed under
 * (remembered, so an object mutated in place is still removed from where
 * it was). Empty buckets are always deleted.
 */
export class IndexTable {
  /** value → one key, or a set of several */
  readonly #buckets = new Map<string, string | Set<string>>();
  /** key → its values, for keys with at least one */
  readonly #filed = new Map<string, Filed>();

  /** Files `key` under `values` (the key must not be filed yet). */
  add(key: string, values: Filed): void {
    if (typeof values !== "string" && values.length === 0) return;
    this.#filed.set(key, values);
    for (const value of valuesOf(values)) {
      const bucket = this.#buckets.get(value);
      if (bucket === undefined) this.#buckets.set(value, key);
      else if (typeof bucket === "string") {
        if (bucket !== key) this.#buckets.set(value, new Set([bucket, key]));
      } else bucket.add(key);
    }
  }

  /** Files `key` under `values` instead of wherever it was (nothing to do when they are the same). */
  set(key: string, values: Filed): void {
    const was = this.#filed.get(key);
    if (was !== undefined && sameValues(was, values)) return;
    this.remove(key);
    this.add(key, values);
  }

  /** Removes `key` from wherever it was filed. */
  remove(key: string): void {
    const values = this.#filed.get(key);
    if (values === undefined) return;
    this.#filed.delete(key);
    for (const value of valuesOf(values)) {
      const bucket = this.#buckets.get(value);
      if (bucket === undefined) continue;
      if (typeof bucket === "string") {
        if (bucket === key) this.#buckets.delete(value);
      } else {
        bucket.delete(key);
        if (bucket.size === 1) this.#buckets.set(value, bucket.values().next().value!);
      }
    }
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
}

function sameValues(a: Filed, b: Filed): boolean {
  if (typeof a === "string" || typeof b === "string") return a === b;
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
