/**
 * The metrics no-leak proof, as a program: starts and stops reflectors
 * (half as informers, half as plain reflectors) with Prometheus metrics, in
 * rounds, and prints after each round the registry's series count and the
 * heap after a forced GC, as ratios against the baseline measured at the
 * start of the same run. A control round keeps 1,000 metric handles alive
 * (not disposed) to show what a leak looks like in these numbers.
 *
 * Run: `deno run --allow-read --allow-env --v8-flags=--expose-gc benchmarks/metrics_leak.ts [rounds=5] [perRound=2000]`
 *
 * @module
 */
import * as promClient from "prom-client";
import process from "node:process";
import { prometheusMetrics } from "../metrics.ts";
import type { KubeList, KubeObject, WatchEvent } from "../src/api/types.ts";
import { Indexer } from "../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../src/cache/key_func.ts";
import { Informer } from "../src/informer/informer.ts";
import type { PrometheusMetrics } from "../src/metrics/prometheus_metrics.ts";
import { Reflector } from "../src/reflector/reflector.ts";
import type { ListerWatcher, WatchOptions } from "../src/transport/lister_watcher.ts";

const gc = (globalThis as { gc?: () => void }).gc;

/** Lists `count` objects, then watches: one MODIFIED event and a BOOKMARK, then waits for abort. */
function listerWatcher(count: number): ListerWatcher {
  const items = Array.from({ length: count }, (_, i): KubeObject => ({
    kind: "ConfigMap",
    metadata: { name: `cm-${i}`, namespace: "bench", resourceVersion: String(10 + i) },
  }));
  return {
    list: (): Promise<KubeList> => Promise.resolve({ metadata: { resourceVersion: "100" }, items }),
    async *watch(options: WatchOptions): AsyncGenerator<WatchEvent, void, undefined> {
      yield {
        type: "MODIFIED",
        object: { ...items[0], metadata: { ...items[0].metadata, resourceVersion: "101" } },
      };
      yield { type: "BOOKMARK", object: { metadata: { resourceVersion: "102" } } };
      await new Promise((_, reject) => {
        options.signal?.addEventListener("abort", () => reject(options.signal!.reason), {
          once: true,
        });
      });
    },
  };
}

async function cycle(metrics: PrometheusMetrics, i: number): Promise<void> {
  const ac = new AbortController();
  const name = `r-${i}`;
  const lw = listerWatcher(3);
  const opts = { name, onError: () => {}, minWatchTimeoutMs: 60_000 };
  if (i % 2 === 0) {
    const informer = new Informer(lw, { ...opts, metrics });
    informer.addEventHandler({ onAdd: () => {}, onUpdate: () => {} });
    const done = informer.run({ signal: ac.signal });
    await informer.waitForSync();
    await new Promise((r) => setTimeout(r, 1));
    ac.abort();
    await done;
  } else {
    const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
    const m = metrics.reflector(name, { storeSize: () => store.size });
    const reflector = new Reflector(lw, store, { ...opts, observer: m });
    const done = reflector.run({ signal: ac.signal });
    await reflector.synced;
    await new Promise((r) => setTimeout(r, 1));
    ac.abort();
    await done;
    m.dispose();
  }
}

async function measure(registry: promClient.Registry): Promise<{ series: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 0));
  }
  const series = (await registry.getMetricsAsJSON()).reduce((n, m) => n + m.values.length, 0);
  return { series, heap: process.memoryUsage().heapUsed };
}

const rounds = Number(process.argv[2] ?? 5);
const perRound = Number(process.argv[3] ?? 2000);
const registry = new promClient.Registry();
const metrics = prometheusMetrics({ client: promClient, registry });
if (!gc) {
  console.warn(
    "no gc(): run with --v8-flags=--expose-gc (Deno) or --expose-gc (Node) for stable heap numbers",
  );
}

for (let i = 0; i < 200; i += 50) {
  await Promise.all(Array.from({ length: 50 }, (_, j) => cycle(metrics, i + j)));
}
const base = await measure(registry);
console.log(`baseline: ${base.series} series, heap ${(base.heap / 2 ** 20).toFixed(1)} MiB`);
let started = 200;
for (let r = 1; r <= rounds; r++) {
  for (let i = 0; i < perRound; i += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => cycle(metrics, started + i + j)));
  }
  started += perRound;
  const now = await measure(registry);
  console.log(
    `after ${started - 200} reflectors started and stopped: series ${now.series} (${
      now.series - base.series >= 0 ? "+" : ""
    }${now.series - base.series}), ` +
      `heap ratio ${(now.heap / base.heap).toFixed(3)}`,
  );
}
const leaked = Array.from({ length: 1000 }, (_, i) => metrics.reflector(`leak-${i}`));
for (const m of leaked) m.listDone?.({ durationMs: 1, items: 1, resourceVersion: "1" });
const control = await measure(registry);
console.log(
  `control, 1000 handles never disposed: series ${control.series} (+${
    control.series - base.series
  }), heap ratio ${(control.heap / base.heap).toFixed(3)}`,
);
for (const m of leaked) m.dispose();
leaked.length = 0;
const end = await measure(registry);
console.log(
  `control disposed: series ${end.series}, heap ratio ${(end.heap / base.heap).toFixed(3)}`,
);
