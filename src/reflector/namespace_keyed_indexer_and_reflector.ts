import type { KubeObject } from "../api/types.ts";
import { Indexer } from "../cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../cache/namespace_index.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { Reflector, type ReflectorOptions } from "./reflector.ts";

/**
 * An {@linkcode Indexer} keyed by `namespace/name` with the namespace index,
 * and a {@linkcode Reflector} that fills it: client-go's
 * `NewNamespaceKeyedIndexerAndReflector`.
 *
 * @example
 * ```ts
 * import { KubeClient, newNamespaceKeyedIndexerAndReflector, resourceListerWatcher } from "../../mod.ts";
 * const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:8001" }), { apiVersion: "v1", resource: "pods" });
 * const { indexer, reflector } = newNamespaceKeyedIndexerAndReflector(lw, { expectedKind: "Pod" });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * console.log(indexer.byIndex("namespace", "kube-system").length);
 * ac.abort();
 * await done;
 * ```
 */
export function newNamespaceKeyedIndexerAndReflector<T extends KubeObject = KubeObject>(
  lw: ListerWatcher<T>,
  options: ReflectorOptions = {},
): { indexer: Indexer<T>; reflector: Reflector<T> } {
  const indexer = new Indexer<T>(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  const reflector = new Reflector(lw, indexer, options);
  return { indexer, reflector };
}
