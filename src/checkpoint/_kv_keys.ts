/**
 * The keys `kvCheckpointStorage` writes, and the check that they fit the
 * store's key limit: a pure naming scheme, tested on its own.
 *
 * @module
 */

/**
 * The longest suffixes added to a key: a checkpoint's piece (`/base/` and
 * 16 hex digits; `/log/` and `/page/` are no longer), then a part of a
 * split value (`/parts/`, 16 hex digits, `/`, an index of at most
 * {@linkcode MAX_PART_DIGITS} digits).
 */
export const PIECE_SUFFIX_BYTES = "/base/".length + 16;
/** The most digits of a part's index (so at most 10^7 parts to a value). */
export const MAX_PART_DIGITS = 7;
/** See {@linkcode PIECE_SUFFIX_BYTES}. */
export const PART_SUFFIX_BYTES = "/parts/".length + 16 + 1 + MAX_PART_DIGITS;
/** A key that is itself a checkpoint's piece (see `_head.ts`'s `pieceKey`). */
const PIECE_KEY = /\/(base|log|page)\/[0-9a-f]{16}$/;

/** The UTF-8 length of `text`. */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/** How a storage names what it stores. */
export interface KvKeys {
  /** The key of a value's manifest (the value itself when it fits). */
  manifestKey(key: string): string;
  /** The key of a part of a split value. */
  partKey(key: string, generation: string, index: number): string;
  /**
   * Throws a `TypeError` unless `key` is a non-empty string whose longest
   * stored key fits `maxKeyBytes`: the prefix, the key, a piece's suffix
   * (unless the key is already a piece's) and a part's suffix.
   */
  checkKey(key: unknown): void;
}

/** The keys of a storage with this `prefix` over a store that takes keys of `maxKeyBytes`. */
export function kvKeys(prefix: string, maxKeyBytes: number): KvKeys {
  const prefixBytes = utf8Length(prefix);
  return {
    manifestKey: (key) => prefix + key,
    partKey(key, generation, index) {
      if (index >= 10 ** MAX_PART_DIGITS) {
        throw new RangeError(
          `kvCheckpointStorage: a value of more than ${10 ** MAX_PART_DIGITS} parts`,
        );
      }
      return `${prefix}${key}/parts/${generation}/${index}`;
    },
    checkKey(key) {
      if (typeof key !== "string" || key === "") {
        throw new TypeError("kvCheckpointStorage: key must be a non-empty string");
      }
      const keyBytes = utf8Length(key);
      const longest = prefixBytes + keyBytes + (PIECE_KEY.test(key) ? 0 : PIECE_SUFFIX_BYTES) +
        PART_SUFFIX_BYTES;
      if (longest > maxKeyBytes) {
        const shown = key.length > 24 ? `${key.slice(0, 24)}…` : key;
        throw new TypeError(
          `kvCheckpointStorage: key too long: a stored key would be ${longest} bytes, over ` +
            `maxKeyBytes (${maxKeyBytes}); keep the key to ${keyBytes - (longest - maxKeyBytes)} ` +
            `bytes (it has ${keyBytes}: "${shown}"), room is kept for the prefix and the ` +
            `suffixes of a checkpoint's pieces and parts`,
        );
      }
    },
  };
}
