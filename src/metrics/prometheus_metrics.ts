/**
 * The Prometheus backend of {@linkcode MetricsProvider}, over the
 * application's own `prom-client`. Reached only through the `metrics`
 * entry point.
 *
 * @module
 */
import { ERROR_REASONS, errorReason } from "./error_reason.ts";
import type {
  PromClientLike,
  PromGaugeLike,
  PromLabels,
  PromRegistryLike,
} from "./prom_client_like.ts";
import type {
  MetricsProvider,
  ReflectorMetrics,
  ReflectorMetricsSources,
} from "./reflector_metrics.ts";

/** Options of {@linkcode prometheusMetrics}. */
export interface PrometheusMetricsOptions<R extends PromRegistryLike = PromRegistryLike> {
  /** The `prom-client` module (`import * as promClient from "prom-client"`). Required. */
  client: PromClientLike<R>;
  /** The registry to register into. Default: `client.register` (the global one). */
  registry?: R;
  /** Prefix of every metric name. Default: `"kube_"`. */
  prefix?: string;
}

/** A {@linkcode MetricsProvider} backed by `prom-client`. */
export interface PrometheusMetrics extends MetricsProvider {
  /** The registry the metrics live in. */
  readonly registry: PromRegistryLike;
  /** Reflector names with live series. */
  readonly names: string[];
  /** Removes every metric of this adapter from the registry. */
  unregister(): void;
}

const RELIST_REASONS = ["initial", "expired", "list_failed", "streaming_fallback"] as const;
const LIST_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const WATCH_SECONDS = [0.1, 1, 10, 60, 120, 300, 450, 600, 900];
const HANDLER_SECONDS = [0.0001, 0.001, 0.01, 0.1, 1, 10];
const ITEMS = [0, 1, 10, 100, 1_000, 10_000, 100_000];

interface Live {
  refs: number;
  lastEventAt: number;
  sources: Set<ReflectorMetricsSources>;
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
 * `informer_handler_queue_depth`, `informer_handler_duration_seconds`,
 * `informer_handler_errors_total`, `informer_handler_queue_overflows_total`.
 *
 * @example
 * ```ts ignore
 * import * as promClient from "prom-client";
 * import { prometheusMetrics } from "../../metrics.ts";
 * const registry = new promClient.Registry();
 * const metrics = prometheusMetrics({ client: promClient, registry });
 * const m = metrics.reflector("configmaps", { storeSize: () => 3 });
 * m.listDone?.({ durationMs: 20, items: 3, resourceVersion: "42" });
 * console.log(await registry.metrics());
 * m.dispose();
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
  const names: string[] = [];
  const base = (name: string, help: string, labelNames = ["name"]) => {
    names.push(prefix + name);
    return { name: prefix + name, help, labelNames, registers: [registry] };
  };
  const counter = (name: string, help: string, reason = false) =>
    new client.Counter(base(name, help, reason ? ["name", "reason"] : ["name"]));
  const histogram = (name: string, help: string, buckets: number[]) =>
    new client.Histogram({ ...base(name, help), buckets });
  const sampled = (
    name: string,
    help: string,
    read: (l: Live, now: number) => number | undefined,
  ) => {
    const gauge: PromGaugeLike = new client.Gauge({
      ...base(name, help),
      collect: () => {
        gauge.reset();
        const now = Date.now();
        for (const [n, l] of live) {
          const v = read(l, now);
          if (v !== undefined) gauge.set({ name: n }, v);
        }
      },
    });
    return gauge;
  };
  const sum = (l: Live, key: keyof ReflectorMetricsSources) => {
    let total: number | undefined;
    for (const s of l.sources) {
      const f = s[key];
      if (f) total = (total ?? 0) + safe(f);
    }
    return total;
  };

  const m = {
    lists: counter("reflector_lists_total", "Complete lists (all pages) done by the reflector."),
    listSeconds: histogram(
      "reflector_list_duration_seconds",
      "Duration of complete lists.",
      LIST_SECONDS,
    ),
    listItems: histogram("reflector_list_items", "Objects per complete list.", ITEMS),
    listErrors: counter("reflector_list_errors_total", "Failed lists, by error class.", true),
    relists: counter("reflector_relists_total", "Lists started, by why they were needed.", true),
    watches: counter("reflector_watches_total", "Watch requests started."),
    shortWatches: counter(
      "reflector_short_watches_total",
      "Watches that ended within the short-watch window with no event.",
    ),
    watchSeconds: histogram(
      "reflector_watch_duration_seconds",
      "Duration of watches.",
      WATCH_SECONDS,
    ),
    watchItems: histogram("reflector_watch_items", "Events (bookmarks included) per watch.", ITEMS),
    watchErrors: counter(
      "reflector_watch_errors_total",
      "Watches that ended in an error, by error class.",
      true,
    ),
    lastRv: new client.Gauge(
      base("reflector_last_resource_version", "The last resourceVersion seen (when numeric)."),
    ),
    handlerSeconds: histogram(
      "informer_handler_duration_seconds",
      "Duration of handler calls.",
      HANDLER_SECONDS,
    ),
    handlerErrors: counter(
      "informer_handler_errors_total",
      "Handler calls that threw or rejected.",
    ),
    overflows: counter(
      "informer_handler_queue_overflows_total",
      "Times a handler queue filled up and began coalescing.",
    ),
  };
  sampled("reflector_store_objects", "Objects in the store.", (l) => sum(l, "storeSize"));
  sampled(
    "reflector_seconds_since_last_event",
    "Seconds since the last list, event or bookmark.",
    (l, now) => (now - l.lastEventAt) / 1000,
  );
  sampled(
    "informer_handler_queue_depth",
    "Notifications waiting for handlers.",
    (l) => sum(l, "handlerQueueDepth"),
  );

  const plain = [
    m.lists,
    m.listSeconds,
    m.listItems,
    m.watches,
    m.shortWatches,
    m.watchSeconds,
    m.watchItems,
    m.lastRv,
    m.handlerSeconds,
    m.handlerErrors,
    m.overflows,
  ];
  const removeSeries = (name: string) => {
    for (const metric of plain) metric.remove({ name });
    for (const reason of ERROR_REASONS) {
      m.listErrors.remove({ name, reason });
      m.watchErrors.remove({ name, reason });
    }
    for (const reason of RELIST_REASONS) m.relists.remove({ name, reason });
  };

  return {
    registry,
    get names() {
      return [...live.keys()];
    },
    unregister() {
      for (const name of names) registry.removeSingleMetric(name);
      live.clear();
      forget();
    },
    reflector(name: string, sources: ReflectorMetricsSources = {}): ReflectorMetrics {
      if (typeof name !== "string" || name === "") {
        throw new TypeError("reflector metrics: name must be a non-empty string");
      }
      let l = live.get(name);
      if (!l) {
        live.set(name, l = { refs: 0, lastEventAt: Date.now(), sources: new Set() });
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
        relist: guard((reason) => m.relists.inc({ name, reason: reason.replace("-", "_") })),
        watchStart: guard(() => m.watches.inc(labels)),
        watchEnd: guard(({ durationMs, events, error, short }) => {
          m.watchSeconds.observe(labels, durationMs / 1000);
          m.watchItems.observe(labels, events);
          if (short) m.shortWatches.inc(labels);
          if (error !== undefined) m.watchErrors.inc({ name, reason: errorReason(error) });
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

function safe(f: () => number): number {
  try {
    const v = f();
    return Number.isFinite(v) ? v : 0;
  } catch {
    return 0;
  }
}
