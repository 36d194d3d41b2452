/**
 * The library's own way into an {@linkcode Indexer}'s update, for a caller
 * that has already computed the object's key and needs the object it
 * replaces (the informer's store, once per event). Not exported from
 * `mod.ts`: a key that is not the indexer's key for the object would file
 * it wrongly.
 *
 * @module
 */

/** `indexer[keyedUpdate](key, obj)`: stores `obj` under `key` (its key) and returns what it replaced. */
export const keyedUpdate: unique symbol = Symbol("keyedUpdate");

/**
 * `indexer[keyedGet](key, obj)`: the stored object under `key`, the key of
 * `obj` (its key function's answer, already computed): found from the
 * object where the indexer can (under `namespace/name` keys, by namespace
 * and name), without taking the key apart.
 */
export const keyedGet: unique symbol = Symbol("keyedGet");
