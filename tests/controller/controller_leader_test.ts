/**
 * Controller with `leaderElection`: two replicas (each with its own
 * informer) on one test API server; the election runs on a manual clock,
 * the informers on real time. Every reconcile records its start and end, so
 * that the tests check that no key is reconciled by both replicas at once.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Controller } from "../../src/controller/controller.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { assertNoOverlap, cm, replicaHarness, until } from "./_replica_harness.ts";

const setup = (names: string[]) => replicaHarness(names, "leaderElection");

test("Controller leaderElection: only the leader reconciles; the standby syncs and takes over within a retry period of a clean stop, then reconciles every key", async () => {
  const t = await setup(["a", "b", "c"]);
  try {
    const a = t.start("a");
    await until(() => t.reconciledBy("a").length === 3, "a reconciles every key");
    assert.deepEqual(t.reconciledBy("a"), ["default/a", "default/b", "default/c"]);
    assert.deepEqual(a.controller.ownership, {
      mode: "leader",
      owning: true,
      identity: "a",
      leader: "a",
      transitions: 1,
    });

    const ofA = t.metricSources.get("ctrl/a")!;
    assert.equal(ofA.ownership().owning, true);
    assert.equal(ofA.keysOwned?.(), 3);

    const b = t.start("b");
    await t.pass(4_000, 2); // a renews, b retries
    t.server.update(cm("b", { v: "2" }));
    await until(() => t.reconciledBy("a").length === 4, "a reconciles the change");
    await t.pass(2_000, 2);
    assert.deepEqual(t.reconciledBy("b"), [], "the standby reconciles nothing");
    assert.equal(b.controller.ownership.owning, false);
    assert.equal(b.controller.ownership.leader, "a");
    assert.equal(t.metricSources.get("ctrl/b")?.keysOwned?.(), 0, "the standby owns no key");

    a.stop.abort();
    assert.equal(await a.done, "ended");
    assert.equal(t.metricSources.has("ctrl/a"), false, "disposed when run() ended");
    const stoppedAt = t.clock.now();
    for (let i = 0; i < 30 && !b.controller.ownership.owning; i++) await t.pass(100, 1);
    assert.equal(b.controller.ownership.owning, true);
    assert.ok(t.clock.now() - stoppedAt <= 2_000, `${t.clock.now() - stoppedAt} ms`);
    await until(() => t.reconciledBy("b").length === 3, "b reconciles every key on taking over");
    assertNoOverlap(t.log);
    assert.deepEqual(t.errors, []);
  } finally {
    await t.close();
  }
});

test("Controller leaderElection: when renewals fail past the renew deadline the reconcile in progress is aborted and no other key reaches a worker; the other replica leads only after the lease duration", async () => {
  const t = await setup(["a", "b"]);
  try {
    const aborted: string[] = [];
    const a = t.start("a", {
      reconcile: (key, signal) =>
        key === "default/a" // hangs until aborted
          ? new Promise<void>((_, reject) => {
            signal.addEventListener("abort", () => {
              aborted.push(key);
              reject(signal.reason);
            });
          })
          : undefined,
    });
    await until(() => t.reconciledBy("a").length === 1, "a reconciles b");
    const b = t.start("b");
    await t.pass(2_000, 2);
    t.server.inject({
      resource: "leases",
      verb: "update",
      times: 1_000,
      fault: { kind: "status", code: 500 },
    });
    const failingFrom = t.clock.now();
    // a loses leadership within its renew deadline (plus the retry period it waits to renew)
    for (let i = 0; i < 130 && a.controller.ownership.owning; i++) await t.pass(100, 2);
    assert.equal(a.controller.ownership.owning, false);
    const lostAfter = t.clock.now() - failingFrom;
    assert.ok(lostAfter <= 12_000, `${lostAfter} ms`);
    // the elector notices at its renew deadline (the retry period it waits, plus 10 s)
    for (let i = 0; i < 40 && aborted.length === 0; i++) await t.pass(100, 2);
    assert.equal(aborted.length, 1, "the reconcile in progress is aborted");
    assert.ok(t.clock.now() - failingFrom <= 12_100, `${t.clock.now() - failingFrom} ms`);
    t.server.update(cm("b", { v: "2" }));
    await t.pass(1_000, 2);
    assert.deepEqual(t.reconciledBy("a"), ["default/a", "default/b"], "nothing after the loss");
    assert.equal(b.controller.ownership.owning, false, "b must not lead before a's lease expired");
    assert.ok(t.errors.every((e) => e instanceof KubeStatusError && e.code === 500));
  } finally {
    await t.close();
  }
});

test("Controller leaderElection: a clean stop releases the Lease only after the reconcile in progress has settled", async () => {
  const t = await setup(["a"]);
  try {
    let finish = () => {};
    const a = t.start("a", {
      // ignores its signal until the test lets it finish
      reconcile: () => new Promise<void>((resolve) => (finish = resolve)),
    });
    await until(() => t.log.length === 1, "a starts reconciling");
    const b = t.start("b");
    await t.pass(2_000, 2);
    a.stop.abort();
    await t.pass(4_000, 1);
    const lease = await t.client.requestJson<{ spec: { holderIdentity?: string } }>(
      "/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl",
    );
    assert.equal(lease.spec.holderIdentity, "a", "held while a reconcile runs");
    assert.equal(b.controller.ownership.owning, false);
    finish();
    assert.equal(await a.done, "ended");
    for (let i = 0; i < 30 && !b.controller.ownership.owning; i++) await t.pass(100, 1);
    assert.equal(b.controller.ownership.owning, true);
    await until(() => t.reconciledBy("b").length === 1, "b reconciles");
    assertNoOverlap(t.log);
  } finally {
    await t.close();
  }
});

test("Controller leaderElection: a 403 on the Lease rejects run() with the API's error", async () => {
  const t = await setup(["a"]);
  try {
    t.server.inject({
      resource: "leases",
      verb: "get",
      times: 1_000,
      fault: { kind: "status", code: 403 },
    });
    const a = t.start("a");
    const result = await a.done;
    assert.ok(result instanceof KubeStatusError && result.code === 403, String(result));
    assert.deepEqual(t.log, []);
  } finally {
    await t.close();
  }
});

test("Controller leaderElection: informers without lister() and malformed election options are refused at construction", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  const bare = { name: "x", addEventHandler: () => ({}) as never };
  const leaderElection = { client, namespace: "default", name: "ctrl" };
  assert.throws(
    () => new Controller({ name: "c", informers: [bare], reconcile: () => {}, leaderElection }),
    (err: Error) => err instanceof TypeError && /lister\(\)/.test(err.message),
  );
  const informer = new Informer(
    resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" }),
  );
  assert.throws(
    () =>
      new Controller({
        name: "c",
        informers: [informer],
        reconcile: () => {},
        leaderElection: { ...leaderElection, renewDeadlineMs: 20_000 },
      }),
    RangeError,
  );
  assert.throws(
    () =>
      new Controller({
        name: "c",
        informers: [informer],
        reconcile: () => {},
        leaderElection: "yes" as never,
      }),
    TypeError,
  );
});
