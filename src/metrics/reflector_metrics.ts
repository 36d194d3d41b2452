/**
 * The metrics interface of reflectors and informers, and its no-op default.
 * It has no dependency: the Prometheus adapter lives in the `metrics` entry
 * point, and any other backend can implement {@linkcode MetricsProvider}.
 *
 * @module
 */
import type { WatcherObserver } from "../reflector/watcher_options.ts";
import type { WorkQueueMetrics } from "./workqueue_metrics.ts";
import type { ControllerMetrics, ControllerMetricsSources } from "./controller_metrics.ts";

/**
 * Values a metrics backend reads when it is scraped (cheap, must not throw).
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
 * @example A backend of your own
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Informer,
 *   KubeClient,
 *   type MetricsProvider,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const listed = new Map<string, number>(); // objects listed, by informer name
 * const counting: MetricsProvider = {
 *   reflector: (name) => ({
 *     listDone: ({ items }) => void listed.set(name, (listed.get(name) ?? 0) + items),
 *     dispose: () => void listed.delete(name),
 *   }),
 * };
 * const server = await FakeApiServer.start();
 * server.create({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default" } });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "pods",
 * });
 * const informer = new Informer(lw, { name: "pods", metrics: counting, useStreamingList: false });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * await informer.waitForSync();
 * assert.equal(listed.get("pods"), 1);
 * ac.abort();
 * await done;
 * assert.equal(listed.size, 0); // disposed when run() ended
 * await server.close();
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
  /**
   * The metrics of one work queue. A `WorkQueue` asks for them when it is
   * created and calls their `dispose()` when it shuts down. Optional: a
   * backend without it records nothing for work queues.
   *
   * @param name The queue's name: the series' label.
   */
  workqueue?(name: string): WorkQueueMetrics;
  /**
   * The metrics of one controller: what this replica owns (mode, owning,
   * leader, shard members, ownership transitions, keys owned), read from
   * `sources` at scrape time. A `Controller` asks for them when its `run()`
   * starts and calls their `dispose()` when it ends. Optional: a backend
   * without it records nothing for controllers.
   *
   * @param name The controller's name: the series' label.
   * @param sources Values read at scrape time.
   */
  controller?(name: string, sources: ControllerMetricsSources): ControllerMetrics;
}

/**
 * The default {@linkcode MetricsProvider}: records nothing, costs nothing.
 */
export const noopMetrics: MetricsProvider = {
  reflector: () => ({ dispose() {} }),
  workqueue: () => ({ dispose() {} }),
  controller: () => ({ dispose() {} }),
};
