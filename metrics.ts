/**
 * Prometheus metrics for reflectors and informers, through the
 * application's own `prom-client` (this entry point never imports it: pass
 * the module, so the process keeps one registry; on Deno pass
 * `npm:prom-client`). The core (`mod.ts`) only knows the
 * `MetricsProvider` interface and its no-op default.
 *
 * @example An informer's metrics, served as a `/metrics` endpoint would
 * ```ts
 * import assert from "node:assert/strict";
 * import * as promClient from "prom-client";
 * import { Informer, KubeClient, resourceListerWatcher } from "./mod.ts";
 * import { metricsResponse, prometheusMetrics } from "./metrics.ts";
 * import { FakeApiServer } from "./testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * const client = new KubeClient({ server: server.url });
 * const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "pods" });
 * const registry = new promClient.Registry(); // or promClient.register, the global one
 * const informer = new Informer(lw, {
 *   name: "pods",
 *   metrics: prometheusMetrics({ client: promClient, registry }),
 * });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * await informer.waitForSync();
 * // what to answer on GET /metrics (Deno.serve, Bun.serve, a Worker's fetch handler...)
 * const res = await metricsResponse(registry);
 * assert.match(await res.text(), /kube_reflector_lists_total\{name="pods"\} 1$/m);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 *
 * @module
 */
export {
  type PrometheusMetrics,
  prometheusMetrics,
  type PrometheusMetricsOptions,
} from "./src/metrics/prometheus_metrics.ts";
export type {
  PromClientLike,
  PromCounterLike,
  PromGaugeLike,
  PromHistogramLike,
  PromLabels,
  PromMetricConfig,
  PromRegistryLike,
} from "./src/metrics/prom_client_like.ts";
export { metricsResponse } from "./src/metrics/metrics_response.ts";
export { ERROR_REASONS, type ErrorReason, errorReason } from "./src/metrics/error_reason.ts";
export {
  type MetricsProvider,
  noopMetrics,
  type ReflectorMetrics,
  type ReflectorMetricsSources,
} from "./src/metrics/reflector_metrics.ts";
export type { WorkQueueMetrics } from "./src/metrics/workqueue_metrics.ts";
export type {
  ControllerMetrics,
  ControllerMetricsSources,
} from "./src/metrics/controller_metrics.ts";
