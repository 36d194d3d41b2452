/**
 * The Prometheus backend of {@linkcode MetricsProvider}, over the
 * application's own `prom-client`. Reached only through the `metrics`
 * entry point.
 *
 * @module
 */
import { errorReason } from "./error_reason.ts";
import { createSeries, type Live, relistReason } from "./_prometheus_series.ts";
import { workqueueSeries } from "./_prometheus_workqueue.ts";
import { controllerSeries } from "./_prometheus_controller.ts";
import type { PromClientLike, PromLabels, PromRegistryLike } from "./prom_client_like.ts";
import type {
  MetricsProvider,
  ReflectorMetrics,
  ReflectorMetricsSources,
} from "./reflector_metrics.ts";

/**
 * Options of {@linkcode prometheusMetrics}.
 */
export interface PrometheusMetricsOptions<R extends PromRegistryLike = PromRegistryLike> {
  /** The `prom-client` module (`import * as promClient from "prom-client"`). Required. */
  client: PromClientLike<R>;
  /** The registry to register into. Default: `client.register` (the global one). */
  registry?: R;
  /** Prefix of every metric name. Default: `"kube_"`. */
  prefix?: string;
}

/**
 * A {@linkcode MetricsProvider} backed by `prom-client`.
 */
export interface PrometheusMetrics extends MetricsProvider {
  /** The registry the metrics live in. */
  readonly registry: PromRegistryLike;
  /** Reflector names with live series. */
  readonly names: string[];
  /** Work queue names with live series. */
  readonly workqueueNames: string[];
  /** Controller names with live series. */
  readonly controllerNames: string[];
  /** Removes every metric of this adapter from the registry. */
  unregister(): void;
}

const cache = new WeakMap<PromRegistryLike, Map<string, PrometheusMetrics>>();

/**
 * Adapts reflector and informer metrics to `prom-client`. Pass the result
 * as the `metrics` option of an `Informer` (or a factory's `defaults`), or
 * use `reflector(name)` as a plain `Reflector`'s `observer`. Every series
 * is labelled by reflector `name` only (plus a bounded `reason`), and a
 * reflector's series are removed when it stops. Asking twice for the same
 * registry and prefix returns the same adapter.
 *
 * Metrics (with the default prefix `kube_`): `reflector_lists_total`,
 * `reflector_list_duration_seconds`, `reflector_list_items`,
 * `reflector_list_errors_total{reason}`, `reflector_relists_total{reason}`,
 * `reflector_watches_total`, `reflector_short_watches_total`,
 * `reflector_watch_duration_seconds`, `reflector_watch_items`,
 * `reflector_watch_errors_total{reason}`, `reflector_last_resource_version`,
 * `reflector_store_objects`, `reflector_seconds_since_last_event`,
 * `reflector_watching` (1 while a watch is open), `reflector_seconds_not_watching`
 * (how long the store has not been current; 0 while watching),
 * `informer_handler_queue_depth`, `informer_handler_duration_seconds`,
 * `informer_handler_errors_total`, `informer_handler_queue_overflows_total`.
 * Work queues (registered on the first `workqueue(name)`, removed when the
 * queue shuts down): `workqueue_depth`, `workqueue_adds_total`,
 * `workqueue_retries_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`.
 * Controllers (registered on the first `controller(name)`, computed at
 * scrape time, removed when the last controller of the name stops):
 * `controller_owning{mode}`, `controller_leader`, `controller_shard_members`,
 * `controller_keys_owned`, `controller_ownership_transitions_total`.
 *
 * @example A plain Reflector's metrics
 * ```ts
 * import assert from "node:assert/strict";
 * import * as promClient from "prom-client";
 * import {
 *   Indexer,
 *   KubeClient,
 *   metaNamespaceKeyFunc,
 *   Reflector,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { prometheusMetrics } from "../../metrics.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "default" },
 * });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const registry = new promClient.Registry();
 * const metrics = prometheusMetrics({ client: promClient, registry });
 * const store = new Indexer(metaNamespaceKeyFunc);
 * const observer = metrics.reflector("configmaps", { storeSize: () => store.size });
 * const reflector = new Reflector(lw, store, { name: "configmaps", observer });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * assert.match(await registry.metrics(), /kube_reflector_store_objects\{name="configmaps"\} 1/);
 * ac.abort();
 * await done;
 * observer.dispose(); // an Informer disposes of its own; a Reflector's are yours to dispose of
 * assert.deepEqual(metrics.names, []);
 * await server.close();
 * ```
 */
export function prometheusMetrics<R extends PromRegistryLike>(
  options: PrometheusMetricsOptions<R>,
): PrometheusMetrics {
  const { client, prefix = "kube_" } = options ?? {};
  if (!client || typeof client.Counter !== "function" || typeof client.Histogram !== "function") {
    throw new TypeError("prometheusMetrics: options.client must be the prom-client module");
  }
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix) && prefix !== "") {
    throw new TypeError(`prometheusMetrics: invalid prefix ${JSON.stringify(prefix)}`);
  }
  const registry = options.registry ?? client.register;
  let byPrefix = cache.get(registry);
  if (!byPrefix) cache.set(registry, byPrefix = new Map());
  const existing = byPrefix.get(prefix);
  if (existing) return existing;
  const adapter = createAdapter(client, registry, prefix, () => byPrefix!.delete(prefix));
  byPrefix.set(prefix, adapter);
  return adapter;
}

function createAdapter<R extends PromRegistryLike>(
  client: PromClientLike<R>,
  registry: R,
  prefix: string,
  forget: () => void,
): PrometheusMetrics {
  const live = new Map<string, Live>();
  const { m, names, removeSeries } = createSeries(client, registry, prefix, live);
  const queues = workqueueSeries(client, registry, prefix, names);
  const controllers = controllerSeries(client, registry, prefix, names);

  return {
    registry,
    get names() {
      return [...live.keys()];
    },
    get workqueueNames() {
      return queues.names();
    },
    get controllerNames() {
      return controllers.names();
    },
    unregister() {
      for (const name of names) registry.removeSingleMetric(name);
      live.clear();
      queues.clear();
      controllers.clear();
      forget();
    },
    workqueue: (name: string) => queues.workqueue(name),
    controller: (name, sources) => controllers.controller(name, sources),
    reflector(name: string, sources: ReflectorMetricsSources = {}): ReflectorMetrics {
      if (typeof name !== "string" || name === "") {
        throw new TypeError("reflector metrics: name must be a non-empty string");
      }
      let l = live.get(name);
      if (!l) {
        const now = Date.now();
        live.set(
          name,
          l = { refs: 0, lastEventAt: now, watching: false, staleSince: now, sources: new Set() },
        );
        for (const c of [m.lists, m.watches, m.shortWatches, m.handlerErrors, m.overflows]) {
          c.inc({ name }, 0);
        }
      }
      const entry = l;
      entry.refs++;
      entry.sources.add(sources);
      const labels: PromLabels = { name };
      let disposed = false;
      const rv = (v: string) => {
        if (/^\d{1,15}$/.test(v)) m.lastRv.set(labels, Number(v));
      };
      // Every method is a no-op after dispose(), so a late call cannot resurrect a series.
      const guard = <A extends unknown[]>(f: (...a: A) => void) => (...a: A) => {
        if (disposed) return;
        try {
          f(...a);
        } catch { /* metrics never break the reflector */ }
      };
      return {
        listDone: guard(({ durationMs, items, resourceVersion }) => {
          m.lists.inc(labels);
          m.listSeconds.observe(labels, durationMs / 1000);
          m.listItems.observe(labels, items);
          entry.lastEventAt = Date.now();
          rv(resourceVersion);
        }),
        listFailed: guard(({ error }) => m.listErrors.inc({ name, reason: errorReason(error) })),
        relist: guard((reason) => m.relists.inc({ name, reason: relistReason(reason) })),
        watchStart: guard(() => m.watches.inc(labels)),
        watchEnd: guard(({ durationMs, events, error, short }) => {
          m.watchSeconds.observe(labels, durationMs / 1000);
          m.watchItems.observe(labels, events);
          if (short) m.shortWatches.inc(labels);
          if (error !== undefined) m.watchErrors.inc({ name, reason: errorReason(error) });
        }),
        state: guard(({ state }) => {
          const watching = state === "watching";
          if (entry.watching && !watching) entry.staleSince = Date.now();
          entry.watching = watching;
        }),
        event: guard((_type, resourceVersion) => {
          entry.lastEventAt = Date.now();
          rv(resourceVersion);
        }),
        handlerDone: guard(({ durationMs, failed }) => {
          m.handlerSeconds.observe(labels, durationMs / 1000);
          if (failed) m.handlerErrors.inc(labels);
        }),
        handlerQueueOverflow: guard(() => m.overflows.inc(labels)),
        dispose() {
          if (disposed) return;
          disposed = true;
          entry.sources.delete(sources);
          if (--entry.refs > 0 || live.get(name) !== entry) return;
          live.delete(name);
          removeSeries(name);
        },
      };
    },
  };
}
