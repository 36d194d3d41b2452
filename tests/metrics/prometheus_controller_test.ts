import assert from "node:assert/strict";
import * as promClient from "prom-client";
import { test } from "../_test.ts";
import { type PromClientLike, prometheusMetrics } from "../../metrics.ts";
import type { ControllerOwnership } from "../../src/controller/controller_ownership.ts";
import type { ControllerMetricsSources } from "../../src/metrics/controller_metrics.ts";
import { noopMetrics } from "../../src/metrics/reflector_metrics.ts";
import { seriesCount } from "./_series.ts";

const client: PromClientLike<promClient.Registry> = promClient;

function value(text: string, line: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

/** The series of `metric` (no HELP/TYPE lines) in a scrape. */
function lines(text: string, metric: string): string[] {
  return text.split("\n").filter((l) => l.startsWith(metric + "{") || l.startsWith(metric + " "));
}

/** A controller's sources whose ownership and key count the test changes. */
function fakeSources(initial: ControllerOwnership, keys?: number) {
  const state = { ownership: initial, keys, reads: 0 };
  const sources: ControllerMetricsSources = {
    ownership: () => state.ownership,
    ...(keys === undefined ? {} : {
      keysOwned: () => {
        state.reads++;
        return state.keys!;
      },
    }),
  };
  return { state, sources };
}

test("controller metrics in mode single: owning 1, keys owned, no transitions, no leader or member series", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const { state, sources } = fakeSources({ mode: "single", owning: true, transitions: 0 }, 5);
  const handle = metrics.controller!("mirror", sources);
  assert.equal(state.reads, 0, "keysOwned is read at scrape time only");
  const text = await registry.metrics();
  assert.equal(state.reads, 1);
  assert.equal(value(text, 'kube_controller_owning{name="mirror",mode="single"}'), 1);
  assert.equal(value(text, 'kube_controller_keys_owned{name="mirror"}'), 5);
  assert.equal(value(text, 'kube_controller_ownership_transitions_total{name="mirror"}'), 0);
  assert.deepEqual(lines(text, "kube_controller_leader"), []);
  assert.deepEqual(lines(text, "kube_controller_shard_members"), []);
  assert.match(text, /# TYPE kube_controller_ownership_transitions_total counter/);
  assert.match(text, /# TYPE kube_controller_owning gauge/);
  state.keys = 7;
  assert.equal(value(await registry.metrics(), 'kube_controller_keys_owned{name="mirror"}'), 7);
  assert.deepEqual(metrics.controllerNames, ["mirror"]);
  handle.dispose();
  assert.deepEqual(metrics.controllerNames, []);
  assert.equal(await seriesCount(registry), 0, "every series of the controller is gone");
  metrics.unregister();
});

test("controller metrics in mode leader: owning and leader follow leadership, transitions count by delta", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry, prefix: "l_" });
  const standby: ControllerOwnership = {
    mode: "leader",
    owning: false,
    identity: "b",
    leader: "a",
    transitions: 0,
  };
  const { state, sources } = fakeSources(standby);
  const handle = metrics.controller!("c", sources);
  let text = await registry.metrics();
  assert.equal(value(text, 'l_controller_owning{name="c",mode="leader"}'), 0);
  assert.equal(value(text, 'l_controller_leader{name="c"}'), 0);
  assert.equal(value(text, 'l_controller_ownership_transitions_total{name="c"}'), 0);
  assert.deepEqual(lines(text, "l_controller_keys_owned"), [], "no keysOwned source, no series");
  assert.deepEqual(lines(text, "l_controller_shard_members"), []);

  state.ownership = { ...standby, owning: true, leader: "b", transitions: 1 };
  text = await registry.metrics();
  assert.equal(value(text, 'l_controller_owning{name="c",mode="leader"}'), 1);
  assert.equal(value(text, 'l_controller_leader{name="c"}'), 1);
  assert.equal(value(text, 'l_controller_ownership_transitions_total{name="c"}'), 1);

  state.ownership = { ...standby, owning: false, leader: "", transitions: 2 };
  state.ownership = { ...standby, owning: true, leader: "b", transitions: 3 }; // two changes between scrapes
  text = await registry.metrics();
  assert.equal(value(text, 'l_controller_ownership_transitions_total{name="c"}'), 3);
  text = await registry.metrics();
  assert.equal(
    value(text, 'l_controller_ownership_transitions_total{name="c"}'),
    3,
    "a scrape without a change adds nothing",
  );
  handle.dispose();
  assert.equal(await seriesCount(registry), 0);
  metrics.unregister();
});

test("controller metrics in mode shards: members counted, owning while a member, no leader series", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const member: ControllerOwnership = {
    mode: "shards",
    owning: true,
    identity: "r1",
    members: ["r0", "r1", "r2"],
    transitions: 2,
  };
  const { state, sources } = fakeSources(member, 40);
  const handle = metrics.controller!("sharded", sources);
  let text = await registry.metrics();
  assert.equal(value(text, 'kube_controller_owning{name="sharded",mode="shards"}'), 1);
  assert.equal(value(text, 'kube_controller_shard_members{name="sharded"}'), 3);
  assert.equal(value(text, 'kube_controller_keys_owned{name="sharded"}'), 40);
  assert.equal(value(text, 'kube_controller_ownership_transitions_total{name="sharded"}'), 2);
  assert.deepEqual(lines(text, "kube_controller_leader"), []);
  state.ownership = { ...member, owning: false, members: [], transitions: 4 };
  state.keys = 0;
  text = await registry.metrics();
  assert.equal(value(text, 'kube_controller_owning{name="sharded",mode="shards"}'), 0);
  assert.equal(value(text, 'kube_controller_shard_members{name="sharded"}'), 0);
  assert.equal(value(text, 'kube_controller_keys_owned{name="sharded"}'), 0);
  assert.equal(value(text, 'kube_controller_ownership_transitions_total{name="sharded"}'), 4);
  handle.dispose();
  assert.equal(await seriesCount(registry), 0);
  metrics.unregister();
});

test("controller metrics: a changed mode replaces the owning series, it does not leave the old one", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const { state, sources } = fakeSources({ mode: "single", owning: true, transitions: 0 });
  const handle = metrics.controller!("m", sources);
  assert.deepEqual(lines(await registry.metrics(), "kube_controller_owning"), [
    'kube_controller_owning{name="m",mode="single"} 1',
  ]);
  state.ownership = { mode: "leader", owning: false, identity: "x", leader: "", transitions: 0 };
  const text = await registry.metrics();
  assert.deepEqual(lines(text, "kube_controller_owning"), [
    'kube_controller_owning{name="m",mode="leader"} 0',
  ]);
  assert.deepEqual(lines(text, "kube_controller_leader"), ['kube_controller_leader{name="m"} 0']);
  handle.dispose();
  metrics.unregister();
});

test("controller metrics: two live controllers of one name share their series until the last disposes", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const one = fakeSources({ mode: "single", owning: true, transitions: 1 }, 2);
  const two = fakeSources({ mode: "single", owning: true, transitions: 2 }, 3);
  const first = metrics.controller!("same", one.sources);
  const second = metrics.controller!("same", two.sources);
  assert.deepEqual(metrics.controllerNames, ["same"]);
  let text = await registry.metrics();
  assert.equal(value(text, 'kube_controller_owning{name="same",mode="single"}'), 2);
  assert.equal(value(text, 'kube_controller_keys_owned{name="same"}'), 5);
  assert.equal(value(text, 'kube_controller_ownership_transitions_total{name="same"}'), 3);
  first.dispose();
  first.dispose();
  two.state.ownership = { ...two.state.ownership, transitions: 3 };
  text = await registry.metrics();
  assert.equal(value(text, 'kube_controller_owning{name="same",mode="single"}'), 1);
  assert.equal(value(text, 'kube_controller_keys_owned{name="same"}'), 3);
  assert.equal(
    value(text, 'kube_controller_ownership_transitions_total{name="same"}'),
    4,
    "a counter: the disposed controller's transitions stay counted",
  );
  assert.deepEqual(metrics.controllerNames, ["same"]);
  second.dispose();
  assert.deepEqual(metrics.controllerNames, []);
  assert.equal(await seriesCount(registry), 0);
  second.dispose();
  metrics.unregister();
});

test("controller metrics: a throwing source skips only the series it feeds, and the scrape succeeds", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  let broken = false;
  const throwing = metrics.controller!("broken", {
    ownership: () => {
      if (broken) throw new Error("ownership unavailable");
      return { mode: "leader", owning: true, identity: "a", leader: "a", transitions: 1 };
    },
    keysOwned: () => 9,
  });
  const badKeys = metrics.controller!("bad-keys", {
    ownership: () => ({ mode: "single", owning: true, transitions: 0 }),
    keysOwned: () => {
      throw new Error("index unavailable");
    },
  });
  const healthy = metrics.controller!("healthy", {
    ownership: () => ({ mode: "single", owning: true, transitions: 0 }),
    keysOwned: () => Number.NaN,
  });
  let text = await registry.metrics();
  assert.equal(value(text, 'kube_controller_ownership_transitions_total{name="broken"}'), 1);
  broken = true;
  text = await registry.metrics();
  assert.deepEqual(lines(text, "kube_controller_owning"), [
    'kube_controller_owning{name="bad-keys",mode="single"} 1',
    'kube_controller_owning{name="healthy",mode="single"} 1',
  ]);
  assert.deepEqual(lines(text, "kube_controller_leader"), []);
  assert.deepEqual(lines(text, "kube_controller_keys_owned"), [
    'kube_controller_keys_owned{name="broken"} 9',
  ], "a throwing or non-finite keysOwned is skipped");
  assert.equal(
    value(text, 'kube_controller_ownership_transitions_total{name="broken"}'),
    1,
    "the counter keeps its value while its source throws",
  );
  for (const handle of [throwing, badKeys, healthy]) handle.dispose();
  assert.equal(await seriesCount(registry), 0);
  metrics.unregister();
});

test("controller metrics: registered on the first controller(), removed by unregister(), validated", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  metrics.reflector("r").dispose();
  metrics.workqueue!("q").dispose();
  assert.equal(registry.getSingleMetric("kube_controller_owning"), undefined);
  const sources = fakeSources({ mode: "single", owning: true, transitions: 0 }).sources;
  const old = metrics.controller!("c", sources);
  for (
    const name of [
      "owning",
      "leader",
      "shard_members",
      "keys_owned",
      "ownership_transitions_total",
    ]
  ) {
    assert.ok(registry.getSingleMetric(`kube_controller_${name}`), name);
  }
  metrics.unregister();
  assert.equal((await registry.getMetricsAsJSON()).length, 0, "unregister removes them all");
  assert.deepEqual(metrics.controllerNames, []);
  const fresh = prometheusMetrics({ client, registry });
  const handle = fresh.controller!("c", sources);
  old.dispose(); // a handle of the unregistered adapter removes nothing of the fresh one
  assert.equal(
    value(await registry.metrics(), 'kube_controller_owning{name="c",mode="single"}'),
    1,
  );
  handle.dispose();
  assert.throws(() => fresh.controller!("", sources), TypeError);
  assert.throws(() => fresh.controller!("c", {} as never), TypeError);
  assert.throws(() => fresh.controller!("c", { ...sources, keysOwned: 3 as never }), TypeError);
  assert.deepEqual(fresh.controllerNames, []);
  fresh.unregister();
});

test("noopMetrics hands out controller handles that read nothing", () => {
  let reads = 0;
  const m = noopMetrics.controller!("x", {
    ownership: () => {
      reads++;
      return { mode: "single", owning: true, transitions: 0 };
    },
    keysOwned: () => reads++,
  });
  m.dispose();
  m.dispose();
  assert.equal(reads, 0);
});
