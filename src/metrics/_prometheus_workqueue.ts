/**
 * Internals of the Prometheus adapter: the work queue metrics, registered
 * on the first `workqueue(name)` call so that an adapter used only for
 * reflectors registers nothing more.
 *
 * @module
 */
import type { PromClientLike, PromLabels, PromRegistryLike } from "./prom_client_like.ts";
import type { WorkQueueMetrics } from "./workqueue_metrics.ts";

const SECONDS = [0.0001, 0.001, 0.01, 0.1, 1, 10, 60, 600];

interface LiveQueue {
  /** The depth each live queue of this name reported last. */
  depths: Map<object, number>;
}

/** The work queue half of the adapter; `names` receives the metric names it registers. */
export function workqueueSeries<R extends PromRegistryLike>(
  client: PromClientLike<R>,
  registry: R,
  prefix: string,
  names: string[],
) {
  const live = new Map<string, LiveQueue>();
  let metrics: ReturnType<typeof create> | undefined;
  function create() {
    const base = (name: string, help: string) => {
      names.push(prefix + name);
      return { name: prefix + name, help, labelNames: ["name"], registers: [registry] };
    };
    return {
      depth: new client.Gauge(base("workqueue_depth", "Keys waiting in the work queue.")),
      adds: new client.Counter(base("workqueue_adds_total", "Keys added to the work queue.")),
      retries: new client.Counter(
        base("workqueue_retries_total", "Delayed and rate-limited re-adds to the work queue."),
      ),
      queueSeconds: new client.Histogram({
        ...base("workqueue_queue_duration_seconds", "Time a key waits before a worker takes it."),
        buckets: SECONDS,
      }),
      workSeconds: new client.Histogram({
        ...base("workqueue_work_duration_seconds", "Time a worker holds a key."),
        buckets: SECONDS,
      }),
    };
  }

  return {
    /** Queue names with live series. */
    names: () => [...live.keys()],
    /** Forgets every queue (after the adapter's metrics were unregistered). */
    clear() {
      live.clear();
      metrics = undefined;
    },
    workqueue(name: string): WorkQueueMetrics {
      if (typeof name !== "string" || name === "") {
        throw new TypeError("workqueue metrics: name must be a non-empty string");
      }
      const m = metrics ??= create();
      let entry = live.get(name);
      if (!entry) {
        live.set(name, entry = { depths: new Map() });
        m.adds.inc({ name }, 0);
        m.retries.inc({ name }, 0);
        m.depth.set({ name }, 0);
      }
      const self = {};
      const labels: PromLabels = { name };
      const queue = entry;
      queue.depths.set(self, 0);
      let disposed = false;
      const guard = <A extends unknown[]>(f: (...a: A) => void) => (...a: A) => {
        if (disposed) return;
        try {
          f(...a);
        } catch { /* metrics never break the queue */ }
      };
      return {
        depth: guard((depth) => {
          queue.depths.set(self, depth);
          let total = 0;
          for (const d of queue.depths.values()) total += d;
          m.depth.set(labels, total);
        }),
        add: guard(() => m.adds.inc(labels)),
        retry: guard(() => m.retries.inc(labels)),
        queueDuration: guard(({ durationMs }) => m.queueSeconds.observe(labels, durationMs / 1000)),
        workDuration: guard(({ durationMs }) => m.workSeconds.observe(labels, durationMs / 1000)),
        dispose() {
          if (disposed) return;
          disposed = true;
          queue.depths.delete(self);
          if (queue.depths.size > 0 || live.get(name) !== queue) return;
          live.delete(name);
          for (const metric of [m.depth, m.adds, m.retries, m.queueSeconds, m.workSeconds]) {
            metric.remove(labels);
          }
        },
      };
    },
  };
}
