/**
 * Controller with leaderElection: when leadership lapses by time (the last
 * successful renewal started a renew deadline ago) the term ends (its signal
 * aborts), so that a renewal that succeeds later starts a new term, which
 * enqueues every key: a key the informer delivered while this replica was not
 * the leader is not lost.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Controller } from "../../src/controller/controller.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import { gatedFetch } from "../leader/_gated_fetch.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

const cm = (name: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data: {},
});

test("Controller leaderElection: a configmap created while the leader's isLeader lapsed by time (and came back) is still reconciled", async () => {
  const server = await FakeApiServer.start();
  server.create(cm("cm-0"));
  const client = new KubeClient({ server: server.url });
  const clock = new ManualClock(START);
  const gate = gatedFetch();
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
    leaderElection: {
      client: new KubeClient({ server: server.url, fetch: gate.fetch }),
      namespace: "default",
      name: "ctrl",
      identity: "a",
      clock,
      random: () => 0,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_500,
      retryPeriodMs: 1_000,
      onError: () => {},
    },
    reconcile: (key) => void reconciled.push(key),
    onError: () => {},
  });
  const done = controller.run({ signal: stop.signal });
  const settle = async () => {
    for (let i = 0; i < 200 && clock.pendingTimers < 1; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 5));
  };
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      await settle();
      await clock.advance(100);
    }
    await settle();
  };
  try {
    for (let i = 0; i < 100 && !reconciled.includes("default/cm-0"); i++) await settle();
    assert.ok(reconciled.includes("default/cm-0"), "a leads and reconciles");
    const t0 = clock.now() - START;
    await advance(1_000 - t0); // renewed at 1000
    await advance(500);
    gate.hold = () => true; // the renewal at 2000 hangs
    await advance(2_000); // 3500: isLeader lapsed (1000 + 2500), signal not aborted (2000 + 2500)
    assert.equal(controller.ownership.owning, false, "lapsed by time");
    server.create(cm("cm-new"));
    for (let i = 0; i < 2_000 && !informer.lister().get("default", "cm-new"); i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 10));
    gate.hold = () => false;
    gate.release(); // the renewal started at 2000 succeeds at 3500: isLeader until 4500, and on
    await advance(3_000);
    assert.equal(controller.ownership.owning, true, "a leads again");
    assert.ok(
      reconciled.includes("default/cm-new"),
      `default/cm-new, created while isLeader had lapsed, was never reconciled (reconciled: ${reconciled})`,
    );
  } finally {
    gate.hold = () => false;
    gate.release();
    stop.abort();
    for (let i = 0; i < 20; i++) await clock.advance(500);
    await done;
    await informing;
    await server.close();
  }
});
