import assert from "node:assert/strict";
import * as promClient from "prom-client";
import { test } from "../_test.ts";
import { prometheusMetrics } from "../../metrics.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { PrometheusMetrics } from "../../src/metrics/prometheus_metrics.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { FakeListerWatcher, FAST, obj, until } from "../informer/_fake_lister_watcher.ts";
import { canForceGc, heapUsed } from "./_heap.ts";
import { seriesCount } from "./_series.ts";

/** Runs one informer (even i) or plain reflector (odd i) through list, events and stop. */
async function cycle(metrics: PrometheusMetrics, i: number): Promise<void> {
  const lw = new FakeListerWatcher([obj("a"), obj("b")]);
  const ac = new AbortController();
  const name = `r-${i}`;
  if (i % 2 === 0) {
    const informer = new Informer(lw, { ...FAST, name, metrics, onError: () => {} });
    informer.addEventHandler({ onAdd: () => {} });
    const done = informer.run({ signal: ac.signal });
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply(obj("c"));
    lw.bookmark();
    await until(() => informer.lastSyncResourceVersion === "104", "the events");
    ac.abort();
    await done;
  } else {
    const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
    const m = metrics.reflector(name, { storeSize: () => store.size });
    const reflector = new Reflector(lw, store, { ...FAST, name, observer: m, onError: () => {} });
    const done = reflector.run({ signal: ac.signal });
    await reflector.synced;
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply(obj("c"));
    await until(() => store.size === 3, "the event");
    ac.abort();
    await done;
    m.dispose();
  }
}

async function round(metrics: PrometheusMetrics, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, from + count - i) }, (_, j) => cycle(metrics, i + j)),
    );
  }
}

test("starting and stopping 1,000 reflectors returns the registry and the heap to where they started", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client: promClient, registry });
  const baseline = await seriesCount(registry);

  // The test can see a leak: live reflectors do add series.
  const live = Array.from({ length: 10 }, (_, i) => metrics.reflector(`live-${i}`));
  live[0].listDone?.({ durationMs: 1, items: 1, resourceVersion: "5" });
  assert.ok(await seriesCount(registry) > baseline + 10 * 5);
  for (const m of live) m.dispose();
  assert.equal(await seriesCount(registry), baseline);

  await round(metrics, 0, 200); // warm up code paths and allocator pools
  assert.equal(await seriesCount(registry), baseline);
  const before = await heapUsed();
  await round(metrics, 1_000, 1_000);
  const after = await heapUsed();
  assert.equal(
    await seriesCount(registry),
    baseline,
    "every series of every stopped reflector is gone",
  );
  assert.deepEqual(metrics.names, []);
  const grown = after - before;
  // With a forced GC the heap comes back within noise; without one, allow for uncollected garbage.
  const bound = canForceGc ? 2 * 1024 * 1024 : 64 * 1024 * 1024;
  assert.ok(
    grown < bound,
    `heap grew by ${(grown / 1024 / 1024).toFixed(1)} MiB (bound ${bound / 1024 / 1024} MiB)`,
  );
  console.log(
    `metrics leak check: heap ${grown >= 0 ? "+" : ""}${
      (grown / 1024).toFixed(0)
    } KiB after 1,000 reflectors (forced GC: ${canForceGc})`,
  );
});
