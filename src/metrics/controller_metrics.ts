/**
 * The metrics interface of controllers: which share of the keys this
 * replica owns.
 *
 * @module
 */
import type { ControllerOwnership } from "../controller/controller_ownership.ts";

/**
 * Values a metrics backend reads when it is scraped, never in between. A
 * source that throws only costs the series it feeds at that scrape.
 */
export interface ControllerMetricsSources {
  /** What the replica owns now (the controller's `ownership`); cheap. Required. */
  ownership: () => ControllerOwnership;
  /** Keys this replica owns now; may cost O(objects), so it is read only at scrape time. Default: not reported. */
  keysOwned?: () => number;
}

/**
 * The metrics of one running controller, handed out by
 * `MetricsProvider.controller`. Everything is read from the sources at
 * scrape time, so the handle only has to be disposed of: call `dispose()`
 * when the controller stops, and the backend forgets this controller's
 * series (those of its name go when the last live controller of that name
 * disposes).
 *
 * @example A controller's ownership, scraped by the Prometheus adapter
 * ```ts
 * import assert from "node:assert/strict";
 * import * as promClient from "prom-client";
 * import type { ControllerOwnership } from "../../mod.ts";
 * import { prometheusMetrics } from "../../metrics.ts";
 *
 * const registry = new promClient.Registry();
 * const metrics = prometheusMetrics({ client: promClient, registry });
 * let ownership: ControllerOwnership = { mode: "leader", owning: false, leader: "", transitions: 0 };
 * const handle = metrics.controller!("mirror", { ownership: () => ownership, keysOwned: () => 3 });
 * assert.match(await registry.metrics(), /kube_controller_leader\{name="mirror"\} 0/);
 * ownership = { ...ownership, owning: true, transitions: 1 }; // read at the next scrape
 * const text = await registry.metrics();
 * assert.match(text, /kube_controller_owning\{name="mirror",mode="leader"\} 1/);
 * assert.match(text, /kube_controller_ownership_transitions_total\{name="mirror"\} 1/);
 * assert.match(text, /kube_controller_keys_owned\{name="mirror"\} 3/);
 * handle.dispose(); // the controller stopped: its series are gone
 * assert.doesNotMatch(await registry.metrics(), /name="mirror"/);
 * ```
 */
export interface ControllerMetrics {
  /** Forget this controller: stop reading its sources, remove its series. Idempotent. */
  dispose(): void;
}
