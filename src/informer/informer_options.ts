/**
 * The options of informers.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { Indexers } from "../cache/indexer.ts";
import type { KeyFunc } from "../cache/key_func.ts";
import type { MetricsProvider } from "../metrics/reflector_metrics.ts";
import type { ReflectorOptions } from "../reflector/reflector.ts";
import type { TransformFunc } from "./transform.ts";

/**
 * Options of `Informer`: the reflector's options (`name`, `resyncPeriodMs`,
 * `expectedKind`, `onError`, `observer`, backoff and watch timings...) plus
 * these.
 */
export interface InformerOptions<T extends KubeObject> extends ReflectorOptions {
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
}
