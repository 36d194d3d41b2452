/**
 * Internals of the Prometheus adapter: its metrics, and the removal of one
 * reflector's series.
 *
 * @module
 */
import { ERROR_REASONS } from "./error_reason.ts";
import type { PromClientLike, PromGaugeLike, PromRegistryLike } from "./prom_client_like.ts";
import type { ReflectorMetricsSources } from "./reflector_metrics.ts";

const RELIST_REASONS = [
  "initial",
  "expired",
  "list_failed",
  "streaming_fallback",
  "watch_failed",
  "other",
] as const;
const LIST_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const WATCH_SECONDS = [0.1, 1, 10, 60, 120, 300, 450, 600, 900];
const HANDLER_SECONDS = [0.0001, 0.001, 0.01, 0.1, 1, 10];
const ITEMS = [0, 1, 10, 100, 1_000, 10_000, 100_000];

/** What the adapter knows of the live reflectors of one name. */
export interface Live {
  refs: number;
  lastEventAt: number;
  /** A watch is open (the watcher's `state` is `"watching"`). */
  watching: boolean;
  /** When `watching` last became false (`Date.now()`). */
  staleSince: number;
  sources: Set<ReflectorMetricsSources>;
}

/** The bounded `reason` label of relists (`"list-failed"` becomes `"list_failed"`). */
export function relistReason(reason: string): string {
  const r = reason.replaceAll("-", "_");
  return (RELIST_REASONS as readonly string[]).includes(r) ? r : "other";
}

/** Registers every metric of the adapter in `registry`. */
export function createSeries<R extends PromRegistryLike>(
  client: PromClientLike<R>,
  registry: R,
  prefix: string,
  live: Map<string, Live>,
) {
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
    "reflector_watching",
    "1 while a watch is open and the store is current, 0 while listing, reconnecting or backing off.",
    (l) => (l.watching ? 1 : 0),
  );
  sampled(
    "reflector_seconds_not_watching",
    "Seconds since the store was last current (0 while watching): how stale it may be.",
    (l, now) => (l.watching ? 0 : (now - l.staleSince) / 1000),
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

  return { m, names, removeSeries };
}

function safe(f: () => number): number {
  try {
    const v = f();
    return Number.isFinite(v) ? v : 0;
  } catch {
    return 0;
  }
}
