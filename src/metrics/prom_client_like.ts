/**
 * The part of `prom-client` the Prometheus adapter uses, described
 * structurally so that this library never imports `prom-client` itself: the
 * application passes its own copy (one registry per process), and a Deno
 * program passes `npm:prom-client`.
 *
 * @module
 */

/** Label values by label name. */
export type PromLabels = Record<string, string>;

/** A `prom-client` `Registry` (or `register`, the default one). */
export interface PromRegistryLike {
  getSingleMetric(name: string): unknown;
  removeSingleMetric(name: string): void;
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** Configuration shared by the three metric types. `R` is the registry type. */
export interface PromMetricConfig<R extends PromRegistryLike = PromRegistryLike> {
  name: string;
  help: string;
  labelNames: string[];
  registers: R[];
}

/** A `prom-client` `Counter`. */
export interface PromCounterLike {
  inc(labels: PromLabels, value?: number): void;
  remove(labels: PromLabels): void;
}

/** A `prom-client` `Gauge`. */
export interface PromGaugeLike {
  set(labels: PromLabels, value: number): void;
  reset(): void;
  remove(labels: PromLabels): void;
}

/** A `prom-client` `Histogram`. */
export interface PromHistogramLike {
  observe(labels: PromLabels, value: number): void;
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
  Counter: new (config: PromMetricConfig<R>) => PromCounterLike;
  Gauge: new (config: PromMetricConfig<R> & { collect?: () => void }) => PromGaugeLike;
  Histogram: new (config: PromMetricConfig<R> & { buckets: number[] }) => PromHistogramLike;
  /** The default registry. */
  register: R;
}
