/**
 * A Controller with `shards` against the test API server on a manual
 * clock: it drops the keys it sees while it does not own them, and counts
 * on a notification when it owns them again to enqueue them. So
 * `ShardMembership` must never let `owning` change without a notification
 * (here: the run loop held between its list and its recompute by the
 * garbage collection of a dead member's Lease, a DELETE that is slow, with
 * a shorter jitter from then on so that the next renewal is not a re-join).
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Controller } from "../../src/controller/controller.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { microTime } from "../../src/leader/_lease_record.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import { testFetch } from "./_shard_harness.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

const cm = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data: {},
});

test("Controller with shards: a ConfigMap created while its membership's run loop is held in a slow garbage collection is reconciled", async () => {
  const server = await FakeApiServer.start();
  server.create(cm("cm-0"));
  // the Lease of a member that crashed long ago: garbage after 4 of its lease durations
  server.create({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: "ctrl-dead",
      namespace: "default",
      labels: { "kube-reflector.dev/shard-group": "ctrl" },
    },
    spec: {
      holderIdentity: "dead",
      leaseDurationSeconds: 1,
      acquireTime: microTime(START),
      renewTime: microTime(START),
    },
  });
  const client = new KubeClient({ server: server.url });
  const clock = new ManualClock(START);
  const net = testFetch(clock);
  let jitter = 0.99; // periods of 239.6 ms ...
  let heldAt: number | undefined;
  const reconciled: string[] = [];
  const stop = new AbortController();
  const informer = new Informer(
    resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" }),
    { name: "configmaps", onError: () => {} },
  );
  const informing = informer.run({ signal: stop.signal });
  const controller = new Controller({
    name: "ctrl",
    informers: [informer],
    shards: {
      client: new KubeClient({ server: server.url, fetch: net.fetch }),
      namespace: "default",
      name: "ctrl",
      identity: "a",
      clock,
      random: () => jitter,
      leaseDurationMs: 2_000,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 200,
      onError: () => {},
    },
    reconcile: (key) => void reconciled.push(key),
    onError: () => {},
  });
  const done = controller.run({ signal: stop.signal });
  const settle = async () => {
    for (let i = 0; i < 2_000; i++) {
      await new Promise((r) => setTimeout(r, 1));
      if (net.inflight === 0 && clock.pendingTimers >= 1) break;
    }
    await new Promise((r) => setTimeout(r, 2));
  };
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      await settle();
      await clock.advance(20);
    }
    await settle();
  };
  try {
    for (let i = 0; i < 500 && !reconciled.includes("default/cm-0"); i++) await advance(20);
    assert.ok(reconciled.includes("default/cm-0"), "a owns and reconciles");
    // the garbage collection of ctrl-dead is slow; from then on the jitter is 0 (... then 200 ms)
    net.hold = (method) => {
      if (method !== "DELETE") return false;
      heldAt ??= clock.now();
      jitter = 0;
      return true;
    };
    for (let i = 0; i < 500 && heldAt === undefined; i++) await advance(20);
    assert.ok(heldAt !== undefined, "the stale Lease is being deleted");
    // past the deadline computed before that list (the fault was: owning lapsed by time alone,
    // and came back with the same members, neither notified)
    await advance(780);
    server.create(cm("cm-new"));
    for (let i = 0; i < 2_000 && !informer.lister().get("default", "cm-new"); i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 10));
    net.hold = () => false;
    net.release();
    await advance(3_000);
    assert.equal(controller.ownership.owning, true, "a owns again");
    assert.deepEqual(controller.ownership.members, ["a"]);
    assert.ok(
      reconciled.includes("default/cm-new"),
      `default/cm-new, created while owning had lapsed, was never reconciled (reconciled: ${reconciled})`,
    );
  } finally {
    net.hold = () => false;
    net.release();
    stop.abort();
    for (let i = 0; i < 20; i++) await clock.advance(500);
    await done;
    await informing;
    await server.close();
  }
});
