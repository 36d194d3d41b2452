/**
 * The library's own ways into an {@linkcode Indexer}'s update, get and
 * delete, for a caller that has already computed the object's key and needs
 * the object it replaces or removes (the informer's store, once per event),
 * or that has a namespace and a name (a `Lister`). Not exported from
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

/**
 * `indexer[keyedDelete](key, obj)`: removes the object stored under `key`,
 * the key of `obj` (already computed), and returns it (`undefined`: none).
 */
export const keyedDelete: unique symbol = Symbol("keyedDelete");

/**
 * `indexer[namespacedGet](namespace, name)`: the stored object whose key
 * is `namespace/name` (or `name` when `namespace` is `""`), found by
 * namespace and name where the indexer holds its objects so, without
 * building the key (a `Lister`'s `get`).
 */
export const namespacedGet: unique symbol = Symbol("namespacedGet");
