/**
 * The part of `prom-client` the Prometheus adapter uses, described
 * structurally so that this library never imports `prom-client` itself: the
 * application passes its own copy (one registry per process), and a Deno
 * program passes `npm:prom-client`.
 *
 * @module
 */

/**
 * Label values by label name.
 *
 * @example
 * ```ts
 * import type { PromLabels } from "./prom_client_like.ts";
 * const labels: PromLabels = { name: "configmaps", reason: "expired" };
 * ```
 */
export type PromLabels = Record<string, string>;

/**
 * A `prom-client` `Registry` (or `register`, the default one).
 *
 * @example
 * ```ts
 * import type { PromRegistryLike } from "./prom_client_like.ts";
 * const metrics = new Map<string, unknown>();
 * const registry: PromRegistryLike = {
 *   getSingleMetric: (name) => metrics.get(name),
 *   removeSingleMetric: (name) => void metrics.delete(name),
 *   metrics: () => Promise.resolve(""),
 *   contentType: "text/plain; version=0.0.4; charset=utf-8",
 * };
 * console.log(registry.getSingleMetric("kube_reflector_lists_total")); // undefined
 * ```
 */
export interface PromRegistryLike {
  /** The registered metric of this name, or `undefined`. */
  getSingleMetric(name: string): unknown;
  /** Unregisters the metric of this name. */
  removeSingleMetric(name: string): void;
  /** Every registered metric in the exposition format. */
  metrics(): Promise<string>;
  /** The `Content-Type` of what `metrics()` returns. */
  readonly contentType: string;
}

/**
 * Configuration shared by the three metric types. `R` is the registry type.
 *
 * @example
 * ```ts
 * import type { PromMetricConfig, PromRegistryLike } from "./prom_client_like.ts";
 * function listsConfig<R extends PromRegistryLike>(registry: R): PromMetricConfig<R> {
 *   return {
 *     name: "kube_reflector_lists_total",
 *     help: "Complete lists (all pages) done by the reflector.",
 *     labelNames: ["name"],
 *     registers: [registry],
 *   };
 * }
 * ```
 */
export interface PromMetricConfig<R extends PromRegistryLike = PromRegistryLike> {
  /** The metric's name. */
  name: string;
  /** The metric's help text. */
  help: string;
  /** The names of the metric's labels. */
  labelNames: string[];
  /** The registries to register the metric in. */
  registers: R[];
}

/**
 * A `prom-client` `Counter`.
 *
 * @example
 * ```ts
 * import type { PromCounterLike } from "./prom_client_like.ts";
 * const values = new Map<string, number>();
 * const counter: PromCounterLike = {
 *   inc: (labels, value = 1) => {
 *     const key = JSON.stringify(labels);
 *     values.set(key, (values.get(key) ?? 0) + value);
 *   },
 *   remove: (labels) => void values.delete(JSON.stringify(labels)),
 * };
 * counter.inc({ name: "pods" });
 * console.log(values.get('{"name":"pods"}')); // 1
 * ```
 */
export interface PromCounterLike {
  /** Adds `value` (default `1`) to the series of `labels`. */
  inc(labels: PromLabels, value?: number): void;
  /** Deletes the series of `labels`. */
  remove(labels: PromLabels): void;
}

/**
 * A `prom-client` `Gauge`.
 *
 * @example
 * ```ts
 * import type { PromGaugeLike } from "./prom_client_like.ts";
 * const values = new Map<string, number>();
 * const gauge: PromGaugeLike = {
 *   set: (labels, value) => void values.set(JSON.stringify(labels), value),
 *   reset: () => values.clear(),
 *   remove: (labels) => void values.delete(JSON.stringify(labels)),
 * };
 * gauge.set({ name: "pods" }, 42);
 * console.log(values.size); // 1
 * ```
 */
export interface PromGaugeLike {
  /** Sets the series of `labels` to `value`. */
  set(labels: PromLabels, value: number): void;
  /** Deletes every series. */
  reset(): void;
  /** Deletes the series of `labels`. */
  remove(labels: PromLabels): void;
}

/**
 * A `prom-client` `Histogram`.
 *
 * @example
 * ```ts
 * import type { PromHistogramLike } from "./prom_client_like.ts";
 * const observed: number[] = [];
 * const histogram: PromHistogramLike = {
 *   observe: (_labels, value) => void observed.push(value),
 *   remove: () => {},
 * };
 * histogram.observe({ name: "pods" }, 0.25);
 * console.log(observed); // [0.25]
 * ```
 */
export interface PromHistogramLike {
  /** Records `value` in the series of `labels`. */
  observe(labels: PromLabels, value: number): void;
  /** Deletes the series of `labels`. */
  remove(labels: PromLabels): void;
}

/**
 * The `prom-client` module (`import * as promClient from "prom-client"`),
 * as far as the adapter needs it. `R` is its `Registry` type (inferred).
 *
 * @example
 * ```ts ignore
 * import * as promClient from "prom-client";
 * import type { PromClientLike } from "./prom_client_like.ts";
 * const client: PromClientLike<promClient.Registry> = promClient;
 * ```
 */
export interface PromClientLike<R extends PromRegistryLike = PromRegistryLike> {
  /** The `Counter` class. */
  Counter: new (config: PromMetricConfig<R>) => PromCounterLike;
  /** The `Gauge` class (`collect` runs before each scrape). */
  Gauge: new (config: PromMetricConfig<R> & { collect?: () => void }) => PromGaugeLike;
  /** The `Histogram` class. */
  Histogram: new (config: PromMetricConfig<R> & { buckets: number[] }) => PromHistogramLike;
  /** The default registry. */
  register: R;
}
