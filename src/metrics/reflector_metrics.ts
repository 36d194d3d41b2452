/**
 * The metrics interface of reflectors and informers, and its no-op default.
 * It has no dependency: the Prometheus adapter lives in the `metrics` entry
 * point, and any other backend can implement {@linkcode MetricsProvider}.
 *
 * @module
 */
import type { WatcherObserver } from "../reflector/watcher_options.ts";

/**
 * Values a metrics backend reads when it is scraped (cheap, must not throw).
 *
 * @example
 * ```ts
 * import { Indexer, metaNamespaceKeyFunc, noopMetrics } from "../../mod.ts";
 * import type { ReflectorMetricsSources } from "../../mod.ts";
 * const store = new Indexer(metaNamespaceKeyFunc);
 * const sources: ReflectorMetricsSources = { storeSize: () => store.size };
 * const metrics = noopMetrics.reflector("configmaps", sources);
 * metrics.dispose();
 * ```
 */
export interface ReflectorMetricsSources {
  /** Objects in the store. Default: not reported. */
  storeSize?: () => number;
  /** Notifications waiting across an informer's handlers. Default: not reported. */
  handlerQueueDepth?: () => number;
}

/**
 * The metrics of one running reflector or informer: a
 * {@linkcode WatcherObserver} (pass it as the reflector's `observer`) plus
 * the informer's handler observations. Every method must be cheap and must
 * not throw. Call `dispose()` when the reflector stops: the backend then
 * forgets this reflector's series, so that starting and stopping reflectors
 * does not grow memory.
 *
 * @example
 * ```ts
 * import { Indexer, metaNamespaceKeyFunc, noopMetrics, Reflector } from "../../mod.ts";
 * import type { ListerWatcher } from "../../mod.ts";
 * const lw: ListerWatcher = { list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }), async *watch() {} };
 * const store = new Indexer(metaNamespaceKeyFunc);
 * const metrics = noopMetrics.reflector("configmaps", { storeSize: () => store.size });
 * const reflector = new Reflector(lw, store, { name: "configmaps", observer: metrics, onError: () => {} });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * ac.abort();
 * await done;
 * metrics.dispose();
 * ```
 */
export interface ReflectorMetrics extends WatcherObserver {
  /** A handler call finished (`failed`: it threw or rejected). */
  handlerDone?(info: { durationMs: number; failed: boolean }): void;
  /** A handler's queue filled up and started coalescing. */
  handlerQueueOverflow?(): void;
  /** Forget this reflector: remove its series. Idempotent. */
  dispose(): void;
}

/**
 * A metrics backend: hands out one {@linkcode ReflectorMetrics} per running
 * reflector. `name` is the only label a backend may derive from it (keep
 * names few and stable: one per resource, not per object). Two live
 * reflectors with the same name share their series.
 *
 * @example
 * ```ts
 * import type { MetricsProvider } from "../../mod.ts";
 * let lists = 0;
 * const counting: MetricsProvider = {
 *   reflector: () => ({ listDone: () => void lists++, dispose() {} }),
 * };
 * const m = counting.reflector("pods");
 * m.listDone?.({ durationMs: 12, items: 3, resourceVersion: "7" });
 * m.dispose();
 * console.log(lists); // 1
 * ```
 */
export interface MetricsProvider {
  /**
   * The metrics of one reflector or informer. An `Informer` asks for them
   * when its `run()` starts and calls their `dispose()` when it ends; for a
   * `Reflector`, pass the result as its `observer` yourself.
   *
   * @param name The reflector's or informer's name: the series' label.
   * @param sources Values read at scrape time. Default: none.
   */
  reflector(name: string, sources?: ReflectorMetricsSources): ReflectorMetrics;
}

/**
 * The default {@linkcode MetricsProvider}: records nothing, costs nothing.
 *
 * @example
 * ```ts
 * import { noopMetrics } from "../../mod.ts";
 * const m = noopMetrics.reflector("pods");
 * m.dispose();
 * ```
 */
export const noopMetrics: MetricsProvider = {
  reflector: () => ({ dispose() {} }),
};
