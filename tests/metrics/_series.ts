/**
 * Counting the series of a prom-client registry.
 *
 * @module
 */
import type * as promClient from "prom-client";

/** Series (label sets, histogram buckets included) in the registry. */
export async function seriesCount(registry: promClient.Registry): Promise<number> {
  return (await registry.getMetricsAsJSON()).reduce((n, m) => n + m.values.length, 0);
}
