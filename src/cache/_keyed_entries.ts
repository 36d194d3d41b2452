/**
 * The library's own way to walk an {@linkcode Indexer}'s keys and objects
 * together (the informer's store, once per list): the indexer builds each
 * key once, where `listKeys()` then `getByKey(key)` would build it and then
 * take it apart again. Not exported from `mod.ts`.
 *
 * @module
 */

/** `indexer[forEachKeyed]((key, obj) => ...)`: every stored object with its key, in `list()` order. */
export const forEachKeyed: unique symbol = Symbol("forEachKeyed");
