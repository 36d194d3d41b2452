/**
 * Controller with `shards`: replicas (each with its own informer) on one
 * test API server; the membership runs on a manual clock, the informers on
 * real time. Every reconcile records its start and end, so that the tests
 * check that no key is reconciled by two replicas at once, and by whom.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Controller } from "../../src/controller/controller.ts";
import { ownerOf } from "../../src/shard/_rendezvous.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { assertNoOverlap, cm, replicaHarness, until } from "./_replica_harness.ts";

const setup = (names: string[]) => replicaHarness(names, "shards");

/** Moves fake time on in 100 ms steps, with a little real time between, until `cond` holds. */
async function drive(
  t: Awaited<ReturnType<typeof setup>>,
  cond: () => boolean,
  what: string,
  maxMs = 60_000,
): Promise<void> {
  for (let ms = 0; ms < maxMs && !cond(); ms += 100) {
    await new Promise((r) => setTimeout(r, 2));
    await t.clock.advance(100);
  }
  await until(cond, what);
}

const NAMES = Array.from({ length: 30 }, (_, i) => `cm-${i}`);
const KEYS = NAMES.map((n) => `default/${n}`);

test("Controller shards: replicas split the keys by rendezvous hashing, each reconciling only its own; a member that stops hands its keys to the others, a member that joins takes its share", async () => {
  const t = await setup(NAMES);
  try {
    const replicas = ["a", "b", "c"].map((id) => t.start(id));
    const owningAll = (ids: string[]) => () =>
      replicas.filter((r) => ids.includes(r.id)).every((r) =>
        r.controller.ownership.owning &&
        r.controller.ownership.members?.join() === ids.join()
      );
    await drive(t, owningAll(["a", "b", "c"]), "three owning members");
    const byOwner = (members: string[], id: string) =>
      KEYS.filter((k) => ownerOf(k, members) === id).sort();
    await drive(
      t,
      () =>
        ["a", "b", "c"].every((id) =>
          t.reconciledBy(id).length === byOwner(["a", "b", "c"], id).length
        ),
      "every key reconciled by its owner",
    );
    for (const id of ["a", "b", "c"]) {
      assert.deepEqual(t.reconciledBy(id), byOwner(["a", "b", "c"], id), `${id}'s keys`);
      assert.ok(t.reconciledBy(id).length > 0, `${id} owns some keys`);
    }
    const ofA = t.metricSources.get("ctrl/a")!;
    assert.equal(ofA.keysOwned?.(), byOwner(["a", "b", "c"], "a").length);
    assert.equal(ofA.ownership().mode, "shards");

    assertNoOverlap(t.log);
    // b stops cleanly: its Lease is deleted, a and c take its keys and reconcile them
    const b = replicas[1];
    t.log.length = 0;
    b.stop.abort();
    assert.equal(await b.done, "ended");
    await drive(t, owningAll(["a", "c"]), "a and c own everything");
    const moved = byOwner(["a", "b", "c"], "b");
    await drive(
      t,
      () => t.log.filter((l) => l.startsWith("end ")).length >= moved.length,
      "b's keys reconciled by the others",
    );
    for (const key of moved) {
      const by = t.log.filter((l) => l.startsWith("end ") && l.endsWith(` ${key}`))
        .map((l) => l.split(" ")[1]);
      assert.deepEqual(by, [ownerOf(key, ["a", "c"])], key);
    }

    assertNoOverlap(t.log);
    // d joins: it takes only its share, and the others stop reconciling those keys
    t.log.length = 0;
    replicas.push(t.start("d"));
    await drive(t, owningAll(["a", "c", "d"]), "d joins");
    const toD = byOwner(["a", "c", "d"], "d");
    assert.ok(toD.length > 0);
    await drive(t, () => t.reconciledBy("d").length === toD.length, "d reconciles its share");
    assert.deepEqual(t.reconciledBy("d"), toD);
    t.log.length = 0;
    for (const name of NAMES) t.server.update(cm(name, { v: "2" }));
    await drive(
      t,
      () => t.log.filter((l) => l.startsWith("end ")).length === KEYS.length,
      "every change reconciled once",
    );
    for (const key of KEYS) {
      const by = t.log.filter((l) => l.startsWith("end ") && l.endsWith(` ${key}`))
        .map((l) => l.split(" ")[1]);
      assert.deepEqual(by, [ownerOf(key, ["a", "c", "d"])], key);
    }
    assertNoOverlap(t.log);
    assert.deepEqual(t.errors, []);
  } finally {
    await t.close();
  }
});

test("Controller shards: excludes leaderElection, and needs informers with lister()", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  const shards = { client, namespace: "default", name: "ctrl" };
  const bare = { name: "x", addEventHandler: () => ({}) as never };
  assert.throws(
    () => new Controller({ name: "c", informers: [bare], reconcile: () => {}, shards }),
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
        shards,
        leaderElection: shards,
      }),
    (err: Error) => err instanceof TypeError && /exclude/.test(err.message),
  );
  assert.throws(
    () =>
      new Controller({
        name: "c",
        informers: [informer],
        reconcile: () => {},
        shards: { ...shards, leaseDurationMs: -1 },
      }),
    RangeError,
  );
});
