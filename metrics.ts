/**
 * Prometheus metrics for reflectors and informers, through the
 * application's own `prom-client` (this entry point never imports it: pass
 * the module, so the process keeps one registry; on Deno pass
 * `npm:prom-client`). The core (`mod.ts`) only knows the
 * `MetricsProvider` interface and its no-op default.
 *
 * @example
 * ```ts ignore
 * import * as promClient from "prom-client";
 * import { Informer, KubeClient, resourceListerWatcher } from "./mod.ts";
 * import { metricsResponse, prometheusMetrics } from "./metrics.ts";
 *
 * const metrics = prometheusMetrics({ client: promClient });
 * const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:8001" }), { apiVersion: "v1", resource: "pods" });
 * const informer = new Informer(lw, { name: "pods", metrics });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * Deno.serve({ port: 9464, signal: ac.signal }, () => metricsResponse(promClient.register));
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
