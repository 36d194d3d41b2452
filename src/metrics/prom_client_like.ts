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
 */
export type PromLabels = Record<string, string>;

/**
 * A `prom-client` `Registry` (or `register`, the default one).
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
 */
export interface PromCounterLike {
  /** Adds `value` (default `1`) to the series of `labels`. */
  inc(labels: PromLabels, value?: number): void;
  /** Deletes the series of `labels`. */
  remove(labels: PromLabels): void;
}

/**
 * A `prom-client` `Gauge`.
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
 */
export interface PromClientLike<R extends PromRegistryLike = PromRegistryLike> {
  /** The `Counter` class (`collect`, when given, runs before each scrape). */
  Counter: new (config: PromMetricConfig<R> & { collect?: () => void }) => PromCounterLike;
  /** The `Gauge` class (`collect` runs before each scrape). */
  Gauge: new (config: PromMetricConfig<R> & { collect?: () => void }) => PromGaugeLike;
  /** The `Histogram` class. */
  Histogram: new (config: PromMetricConfig<R> & { buckets: number[] }) => PromHistogramLike;
  /** The default registry. */
  register: R;
}
