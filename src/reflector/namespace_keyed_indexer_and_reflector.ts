import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { Indexer } from "../cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../cache/namespace_index.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { Reflector, type ReflectorOptions } from "./reflector.ts";

/**
 * An {@linkcode Indexer} keyed by `namespace/name` with the namespace index,
 * and a {@linkcode Reflector} that fills it: client-go's
 * `NewNamespaceKeyedIndexerAndReflector`.
 */
export function newNamespaceKeyedIndexerAndReflector<T extends KubeObjectLike = KubeObject>(
  lw: ListerWatcher<T>,
  options: ReflectorOptions = {},
): { indexer: Indexer<T>; reflector: Reflector<T> } {
  const indexer = new Indexer<T>(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  const reflector = new Reflector(lw, indexer, options);
  return { indexer, reflector };
}
