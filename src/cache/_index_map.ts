/**
 * Internals of `Indexer`: the index maps and their upkeep.
 *
 * @module
 */

/** One stored object and the values it is indexed under, by index name. */
export interface Entry<T> {
  obj: T;
  values: Map<string, string[]>;
}

/** index name -> index value -> keys. Empty buckets are always deleted. */
export type Indices = Map<string, Map<string, Set<string>>>;

/** Checks an index function's result and removes duplicates. */
export function checkValues(indexName: string, values: unknown): string[] {
  if (!Array.isArray(values) || !values.every((v) => typeof v === "string")) {
    throw new TypeError(`Indexer: index function "${indexName}" must return an array of strings`);
  }
  return [...new Set(values)];
}

/** Files `key` under each of its values. */
export function addToIndices(indices: Indices, key: string, values: Map<string, string[]>): void {
  for (const [name, vals] of values) {
    const buckets = indices.get(name)!;
    for (const value of vals) {
      let bucket = buckets.get(value);
      if (!bucket) buckets.set(value, bucket = new Set());
      bucket.add(key);
    }
  }
}

/** Removes `key` from each of its values, deleting buckets left empty. */
export function removeFromIndices(
  indices: Indices,
  key: string,
  values: Map<string, string[]>,
): void {
  for (const [name, vals] of values) {
    const buckets = indices.get(name)!;
    for (const value of vals) {
      const bucket = buckets.get(value);
      if (!bucket) continue;
      bucket.delete(key);
      if (bucket.size === 0) buckets.delete(value);
    }
  }
}
