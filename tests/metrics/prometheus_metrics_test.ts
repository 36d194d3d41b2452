import assert from "node:assert/strict";
import * as promClient from "prom-client";
import { test } from "../_test.ts";
import { metricsResponse, type PromClientLike, prometheusMetrics } from "../../metrics.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { ShortWatchError } from "../../src/api/errors.ts";
import { Informer } from "../../src/informer/informer.ts";
import { FakeListerWatcher, FAST, obj, until } from "../informer/_fake_lister_watcher.ts";
import { seriesCount } from "./_series.ts";

const client: PromClientLike<promClient.Registry> = promClient; // the real module fits the structural type

function value(text: string, line: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test("prometheus adapter records a running informer's lists, watches, errors, store size and handlers", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const lw = new FakeListerWatcher([obj("a"), obj("b"), obj("c")]);
  const informer = new Informer(lw, { ...FAST, name: "cms", metrics, onError: () => {} });
  informer.addEventHandler({ onUpdate: () => Promise.reject(new Error("handler failure")) });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  try {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply({ ...obj("a"), data: { v: "1" } });
    lw.expire();
    await until(() => lw.lists === 2 && lw.liveWatches === 1, "relist and rewatch");
    await until(() => informer.status.watching, "the watch proven");
    const text = await registry.metrics();
    const n = '{name="cms"}';
    assert.equal(value(text, `kube_reflector_lists_total${n}`), 2);
    assert.equal(value(text, `kube_reflector_relists_total{name="cms",reason="initial"}`), 1);
    assert.equal(value(text, `kube_reflector_relists_total{name="cms",reason="expired"}`), 1);
    assert.equal(value(text, `kube_reflector_watch_errors_total{name="cms",reason="expired"}`), 1);
    assert.equal(value(text, `kube_reflector_watches_total${n}`), 2);
    assert.equal(value(text, `kube_reflector_short_watches_total${n}`), 0);
    assert.equal(value(text, `kube_reflector_list_items_count${n}`), 2);
    assert.equal(value(text, `kube_reflector_list_items_sum${n}`), 6);
    assert.equal(value(text, `kube_reflector_watch_duration_seconds_count${n}`), 1);
    assert.equal(value(text, `kube_reflector_store_objects${n}`), 3);
    assert.equal(value(text, `kube_reflector_last_resource_version${n}`), 104);
    assert.ok(value(text, `kube_reflector_seconds_since_last_event${n}`)! < 5);
    assert.equal(value(text, `kube_reflector_watching${n}`), 1);
    assert.equal(value(text, `kube_reflector_seconds_not_watching${n}`), 0);
    assert.equal(value(text, `kube_informer_handler_queue_depth${n}`), 0);
    assert.equal(value(text, `kube_informer_handler_errors_total${n}`), 1);
    assert.equal(
      value(text, `kube_informer_handler_duration_seconds_count${n}`),
      4,
      "three initial adds and one update",
    );
    assert.deepEqual(metrics.names, ["cms"]);
  } finally {
    ac.abort();
    await done;
  }
  const after = await registry.metrics();
  assert.ok(!after.includes('name="cms"'), "every series of the stopped informer is gone");
  assert.deepEqual(metrics.names, []);
});

test("prometheus adapter classifies list and watch errors and short watches with bounded reasons", async () => {
  const registry = new promClient.Registry();
  const m = prometheusMetrics({ client, registry, prefix: "x_" }).reflector("r");
  m.listFailed?.({ durationMs: 1, error: new KubeStatusError({ code: 503 }) });
  m.relist?.("list-failed");
  m.relist?.("streaming-fallback");
  m.watchEnd?.({ durationMs: 5, events: 0, error: new ShortWatchError(5), short: true });
  const text = await registry.metrics();
  assert.equal(value(text, `x_reflector_list_errors_total{name="r",reason="status_5xx"}`), 1);
  assert.equal(value(text, `x_reflector_relists_total{name="r",reason="list_failed"}`), 1);
  assert.equal(value(text, `x_reflector_relists_total{name="r",reason="streaming_fallback"}`), 1);
  assert.equal(value(text, `x_reflector_watch_errors_total{name="r",reason="short_watch"}`), 1);
  assert.equal(value(text, `x_reflector_short_watches_total{name="r"}`), 1);
  m.dispose();
  assert.equal(await seriesCount(registry), 0);
});

test("prometheus adapter shows staleness: watching, and seconds not watching since the watch was lost", async () => {
  const registry = new promClient.Registry();
  const m = prometheusMetrics({ client, registry, prefix: "s_" }).reflector("r");
  m.state?.({ state: "listing" });
  let text = await registry.metrics();
  assert.equal(value(text, `s_reflector_watching{name="r"}`), 0);
  m.state?.({ state: "watching" });
  text = await registry.metrics();
  assert.equal(value(text, `s_reflector_watching{name="r"}`), 1);
  assert.equal(value(text, `s_reflector_seconds_not_watching{name="r"}`), 0);
  m.state?.({ state: "waiting", waitMs: 800 });
  await new Promise((r) => setTimeout(r, 30));
  text = await registry.metrics();
  assert.equal(value(text, `s_reflector_watching{name="r"}`), 0);
  assert.ok(value(text, `s_reflector_seconds_not_watching{name="r"}`)! >= 0.02);
  m.relist?.("watch-failed");
  text = await registry.metrics();
  assert.equal(value(text, `s_reflector_relists_total{name="r",reason="watch_failed"}`), 1);
  m.dispose();
  assert.equal(await seriesCount(registry), 0);
});

test("prometheus adapter: one adapter per registry and prefix, shared names, no series after dispose", async () => {
  const registry = new promClient.Registry();
  const a = prometheusMetrics({ client, registry });
  assert.equal(prometheusMetrics({ client, registry }), a, "asking twice does not register twice");
  const first = a.reflector("pods", { storeSize: () => 2 });
  const second = a.reflector("pods", { storeSize: () => 3 });
  assert.equal(value(await registry.metrics(), 'kube_reflector_store_objects{name="pods"}'), 5);
  first.dispose();
  first.dispose();
  first.listDone?.({ durationMs: 1, items: 1, resourceVersion: "1" }); // late: ignored
  assert.equal(value(await registry.metrics(), 'kube_reflector_store_objects{name="pods"}'), 3);
  second.dispose();
  second.watchStart?.();
  assert.equal(await seriesCount(registry), 0, "no series resurrected by a late call");
  a.unregister();
  assert.equal((await registry.getMetricsAsJSON()).length, 0);
  assert.notEqual(prometheusMetrics({ client, registry }), a, "a fresh adapter after unregister");
  assert.throws(() => prometheusMetrics({ client: {} as never }), TypeError);
  assert.throws(() => prometheusMetrics({ client, registry, prefix: "bad prefix" }), TypeError);
  assert.throws(() => a.reflector(""), TypeError);
});

test("metricsResponse serves the scrape with Prometheus' content type", async () => {
  const registry = new promClient.Registry();
  const m = prometheusMetrics({ client, registry }).reflector("svc");
  const res = await metricsResponse(registry);
  assert.equal(res.headers.get("content-type"), registry.contentType);
  assert.match(await res.text(), /kube_reflector_lists_total\{name="svc"\} 0/);
  m.dispose();
});
