import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { configMap, settles } from "../_harness.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import type { ListerWatcher } from "../../src/transport/lister_watcher.ts";
import { FakeApiServer, type FakeApiServerOptions, ManualClock } from "../../testkit.ts";

const lwOf = (server: FakeApiServer, namespace = "fx") =>
  resourceListerWatcher(new KubeClient({ server: server.url }), {
    apiVersion: "v1",
    resource: "configmaps",
    namespace,
  });

/** The requests a call made to the ConfigMaps: full lists, limit=1 lists, watches. */
function countRequests(server: FakeApiServer, from: number) {
  const rs = server.requests.filter((r) => r.seq > from && r.resource === "configmaps");
  return {
    fullLists: rs.filter((r) => r.verb === "list" && r.query.get("limit") !== "1").length,
    tinyLists: rs.filter((r) => r.verb === "list" && r.query.get("limit") === "1").length,
    watches: rs.filter((r) => r.verb === "watch").length,
  };
}
const lastSeq = (server: FakeApiServer) => server.requests.at(-1)?.seq ?? 0;

async function withServer(
  options: FakeApiServerOptions,
  fn: (server: FakeApiServer) => Promise<void>,
) {
  const server = await FakeApiServer.start({ maxWatchMs: 300, ...options });
  try {
    for (let i = 0; i < 5; i++) server.create(configMap(`cm-${i}`));
    await fn(server);
  } finally {
    await server.close();
  }
}

test("catchUp without a checkpoint lists everything (changes: adds) and saves; the next catchUp gets exactly the changes since, in order, with no full list", async () => {
  await withServer({}, async (server) => {
    const storage = memoryCheckpointStorage();
    const opts: CatchUpOptions = { storage, key: "cms", onError: () => {} };
    const first = await catchUp(lwOf(server), opts);
    assert.equal(first.listed, "no-checkpoint");
    assert.equal(first.complete, true);
    assert.equal(first.changes.length, 5);
    assert.ok(first.changes.every((c) => c.type === "add"));
    assert.equal(first.saved?.count, 5);

    server.create(configMap("new"));
    server.update(configMap("cm-1", "fx", { changed: "yes" }));
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-2" });
    server.create(configMap("elsewhere", "other")); // not ours
    const before = lastSeq(server);
    const second = await catchUp(lwOf(server), opts);
    assert.deepEqual(second.changes.map((c) => `${c.type} ${c.key}`), [
      "add fx/new",
      "update fx/cm-1",
      "delete fx/cm-2",
    ]);
    assert.equal(second.complete, true);
    assert.equal(second.listed, undefined);
    assert.deepEqual(countRequests(server, before), { fullLists: 0, tinyLists: 1, watches: 1 });
    assert.deepEqual([...second.objects.keys()].sort(), [
      "fx/cm-0",
      "fx/cm-1",
      "fx/cm-3",
      "fx/cm-4",
      "fx/new",
    ]);
    assert.ok(BigInt(second.resourceVersion) >= BigInt(second.target));
  });
});

test("catchUp on a quiet resource is proven complete by the bookmark that ends the watch, with no change and no list", async () => {
  await withServer({}, async (server) => {
    const storage = memoryCheckpointStorage();
    await catchUp(lwOf(server), { storage, key: "cms" });
    server.create(configMap("elsewhere", "other")); // the cluster moves on; ours does not
    const before = lastSeq(server);
    const r = await catchUp(lwOf(server), { storage, key: "cms" });
    assert.deepEqual(r.changes, []);
    assert.equal(r.complete, true);
    assert.deepEqual(countRequests(server, before), { fullLists: 0, tinyLists: 1, watches: 1 });
  });
});

test("catchUp lists once when the server gives no proof (a watch without any bookmark, and the target read again has not moved: no watch can prove it), and still returns exactly the changes", async () => {
  await withServer({}, async (server) => {
    const base = lwOf(server);
    const noBookmarks: ListerWatcher = {
      ...base,
      watchBatches: undefined,
      async *watch(o) {
        for await (const ev of base.watch(o)) if (ev.type !== "BOOKMARK") yield ev;
      },
    };
    const storage = memoryCheckpointStorage();
    await catchUp(noBookmarks, { storage, key: "cms" });
    server.update(configMap("cm-3", "fx", { changed: "yes" }));
    server.create(configMap("elsewhere", "other")); // the target is past our last change
    const before = lastSeq(server);
    const r = await catchUp(noBookmarks, { storage, key: "cms" });
    assert.equal(r.listed, "no-proof");
    assert.equal(r.complete, true);
    assert.deepEqual(r.changes.map((c) => `${c.type} ${c.key}`), ["update fx/cm-3"]);
    assert.deepEqual(countRequests(server, before), { fullLists: 1, tinyLists: 2, watches: 1 });
  });
});

test("catchUp from a checkpoint too old for the server lists once and returns the difference (a delete included)", async () => {
  await withServer({ historySize: 2 }, async (server) => {
    const storage = memoryCheckpointStorage();
    await catchUp(lwOf(server), { storage, key: "cms" });
    for (let i = 0; i < 6; i++) server.update(configMap("cm-0", "fx", { n: String(i) }));
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-4" });
    server.compact();
    const before = lastSeq(server);
    // the list hands each item to ListOptions.reuse: the checkpoint's copy of an unchanged one
    const reused: string[] = [];
    const inner = lwOf(server);
    const lw: ListerWatcher = {
      watch: (o) => inner.watch(o),
      identity: (o) => inner.identity!(o),
      list: (o) =>
        inner.list({
          ...o,
          reuse: (item) => {
            const held = o.reuse?.(item);
            if (held) reused.push(held.metadata!.name!);
            return held;
          },
        }),
    };
    const r = await catchUp(lw, { storage, key: "cms", onError: () => {} });
    assert.deepEqual(reused.sort(), ["cm-1", "cm-2", "cm-3"], "not cm-0 (changed)");
    assert.equal(r.listed, "expired");
    assert.equal(r.complete, true);
    assert.deepEqual(r.changes.map((c) => `${c.type} ${c.key}`).sort(), [
      "delete fx/cm-4",
      "update fx/cm-0",
    ]);
    const n = countRequests(server, before);
    assert.equal(n.fullLists, 1);
  });
});

test("catchUp ignores a checkpoint of another namespace (reported), lists, and saves its own", async () => {
  await withServer({}, async (server) => {
    const storage = memoryCheckpointStorage();
    await catchUp(lwOf(server, "other"), { storage, key: "cms" });
    const errors: unknown[] = [];
    const r = await catchUp(lwOf(server), { storage, key: "cms", onError: (e) => errors.push(e) });
    assert.equal(r.listed, "unusable-checkpoint");
    assert.ok(errors[0] instanceof CheckpointError);
    assert.equal(r.objects.size, 5);
  });
});

test("catchUp stops at its budget when the watch stalls: not complete, the state applied so far saved; an abort rejects with its reason", async () => {
  await withServer({}, async (server) => {
    const storage = memoryCheckpointStorage();
    const first = await catchUp(lwOf(server), { storage, key: "cms" });
    server.create(configMap("late"));
    server.inject({ verb: "watch", fault: { kind: "stall" }, times: 100 });
    // On a ManualClock only the test moves time: the real HTTP watch stalls
    // until the budget, and the budget runs out exactly when the clock says.
    const clock = new ManualClock();
    let since = lastSeq(server);
    let settled = false;
    const budgeted = catchUp(lwOf(server), {
      storage,
      key: "cms",
      budgetMs: 300,
      clock,
      onError: () => {},
    }).finally(() => (settled = true));
    await server.waitForRequests((r) => r.verb === "watch", { since }); // the stalled watch
    await clock.advance(299);
    assert.equal(settled, false, "not before the budget");
    await clock.advance(1);
    const r = await settles(budgeted, "catchUp at its budget");
    assert.equal(r.complete, false);
    assert.equal(r.resourceVersion, first.resourceVersion, "nothing applied past the checkpoint");
    assert.equal(r.saved?.count, 5);

    const ac = new AbortController();
    const reason = new Error("stop");
    since = lastSeq(server);
    const pending = catchUp(lwOf(server), { storage, key: "cms", signal: ac.signal });
    await server.waitForRequests((r) => r.resource === "configmaps", { since }); // under way
    ac.abort(reason);
    await assert.rejects(pending, (e) => e === reason);
  });
});

test("catchUp validates its options", async () => {
  const storage = memoryCheckpointStorage();
  const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:1" }), {
    apiVersion: "v1",
    resource: "configmaps",
  });
  await assert.rejects(catchUp(lw, { storage, key: "" }), TypeError);
  await assert.rejects(catchUp(lw, { key: "k" } as unknown as CatchUpOptions), TypeError);
  await assert.rejects(catchUp(lw, { storage, key: "k", budgetMs: 0 }), RangeError);
  await assert.rejects(catchUp(lw, { storage, key: "k", budgetMs: NaN }), RangeError);
  await assert.rejects(catchUp(lw, { storage, key: "k", watchTimeoutSeconds: 2 }), RangeError);
});
