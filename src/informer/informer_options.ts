/**
 * The options of informers.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { Indexers } from "../cache/indexer.ts";
import type { KeyFunc } from "../cache/key_func.ts";
import type { MetricsProvider } from "../metrics/reflector_metrics.ts";
import type { ReflectorOptions } from "../reflector/reflector.ts";
import type { Logger } from "./logger.ts";
import type { TransformFunc } from "./transform.ts";

/**
 * Options of `Informer`: the reflector's options (`name`, `resyncPeriodMs`,
 * `expectedKind`, `onError`, `observer`, backoff and watch timings...) but
 * `reuseListed` (the informer's cache decides what a relist reuses), plus
 * these.
 */
export interface InformerOptions<T extends KubeObjectLike = KubeObject>
  extends Omit<ReflectorOptions, "reuseListed"> {
  /** Applied to every object before it is cached (see {@linkcode TransformFunc}). Default: none. */
  transform?: TransformFunc<T>;
  /** The cache's key function. Default: `metaNamespaceKeyFunc`. */
  keyFunc?: KeyFunc<T>;
  /** The cache's index functions. Default: `{ namespace: namespaceIndexFunc }`. */
  indexers?: Indexers<T>;
  /** Per-handler queue length before coalescing (see the class docs). Default: `1000`. */
  maxQueueLength?: number;
  /** Metrics backend. Default: `noopMetrics`. */
  metrics?: MetricsProvider;
  /**
   * Where the informer writes what it has to say (see {@linkcode Logger} for
   * which level gets what). Handled errors go to `onError` when it is given,
   * else to `logger.warn`. Default: warnings to `console.warn`, nothing else.
   */
  logger?: Logger;
  /**
   * With a `checkpoint`: deliver its objects to the handlers as adds when it
   * is loaded, as client-go does on every start, for handlers that need to
   * see everything. By default they are not announced: after a checkpoint,
   * handlers get exactly the changes since it (adds, updates, deletes,
   * including those a relist finds if the checkpoint was too old). Default: `false`.
   */
  replayCheckpointAsAdds?: boolean;
}
