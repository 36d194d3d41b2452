import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { InformerChange } from "../../src/informer/informer_change.ts";
import { waitForCacheSync } from "../../src/informer/wait_for_cache_sync.ts";
import type { MetricsProvider } from "../../src/metrics/reflector_metrics.ts";
import { FakeListerWatcher, FAST, obj, until } from "./_fake_lister_watcher.ts";
import { Recorder } from "./_recorder.ts";

function describe(c: InformerChange<KubeObject>): string {
  if (c.type === "synced") return "synced";
  if (c.type === "delete") {
    return `delete ${c.key}${c.object instanceof DeletedFinalStateUnknown ? " tombstone" : ""}`;
  }
  return `${c.type} ${c.key}@${c.object.metadata.resourceVersion}`;
}

test("queue-full policy: a blocked handler's queue coalesces and it still ends at the latest state", async () => {
  const lw = new FakeListerWatcher([obj("a"), obj("b")]);
  let overflows = 0;
  const metrics: MetricsProvider = {
    reflector: () => ({ handlerQueueOverflow: () => void overflows++, dispose() {} }),
  };
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const rec = new Recorder();
  const informer = new Informer(lw, { ...FAST, metrics, onError: () => {}, maxQueueLength: 4 });
  const slow = informer.addEventHandler({
    onAdd: async (o, initial) => {
      if (o.metadata.name === "a") await gate;
      rec.onAdd(o, initial);
    },
    onUpdate: (old, o) => rec.onUpdate(old, o),
    onDelete: (o) => rec.onDelete(o),
  });
  const fast = new Recorder();
  informer.addEventHandler(fast);
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  try {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    for (let i = 0; i < 50; i++) lw.apply({ ...obj("b"), data: { i: String(i) } });
    lw.apply(obj("c"));
    lw.remove("ns/c"); // never seen by the slow handler: dropped
    lw.remove("ns/a"); // being handled right now: its delete must survive
    await until(() => fast.events.length === 55, "the fast handler gets every event");
    assert.ok(slow.pending <= 4, `bounded queue, got ${slow.pending}`);
    assert.equal(overflows, 1);
    assert.equal(slow.hasSynced(), false, "the slow handler has not seen the initial list yet");
    release();
    await until(() => slow.pending === 0 && rec.events.length === 3, "the slow handler catches up");
    assert.deepEqual(rec.events, [
      "add ns/a@101 initial",
      "add ns/b@152 initial",
      "delete ns/a@155",
    ]);
    assert.equal(slow.hasSynced(), true);
  } finally {
    release();
    ac.abort();
    await done;
  }
});

test("changes() yields adds, synced, then later changes; its signal's abort ends the loop quietly", async () => {
  const lw = new FakeListerWatcher([obj("a"), obj("b")]);
  const informer = new Informer(lw, { ...FAST, onError: () => {} });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  const it = new AbortController();
  const seen: string[] = [];
  try {
    for await (const change of informer.changes({ signal: it.signal })) {
      seen.push(describe(change));
      if (change.type === "synced") {
        await until(() => lw.liveWatches === 1, "a watch");
        lw.apply({ ...obj("a"), data: { x: "1" } });
        lw.remove("ns/b");
      }
      if (change.type === "delete") it.abort(new Error("enough"));
    }
    assert.ok(it.signal.aborted, "the loop ended because of the abort");
    assert.deepEqual(seen, [
      "add ns/a@101",
      "add ns/b@102",
      "synced",
      "update ns/a@103",
      "delete ns/b",
    ]);
  } finally {
    ac.abort();
    await done;
  }
});

test("changes() ends when the informer stops, and break removes its registration", async () => {
  const lw = new FakeListerWatcher([]);
  const informer = new Informer(lw, { ...FAST, onError: () => {} });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  const first: string[] = [];
  for await (const change of informer.changes()) {
    first.push(describe(change));
    break;
  }
  assert.deepEqual(first, ["synced"], "an empty list still yields synced");
  const seen: string[] = [];
  const consumer = (async () => {
    for await (const change of informer.changes()) seen.push(describe(change));
  })();
  await until(() => seen.length === 1, "synced");
  ac.abort();
  await done;
  await consumer;
  assert.deepEqual(seen, ["synced"]);
});

test("a slow changes() consumer gets relist tombstones in order after its backlog", async () => {
  const lw = new FakeListerWatcher([obj("a"), obj("b")]);
  const informer = new Informer(lw, { ...FAST, onError: () => {} });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  const changes = informer.changes();
  try {
    assert.equal(describe((await changes.next()).value!), "add ns/a@101");
    lw.behindTheWatch((objects) => objects.delete("ns/a"));
    await until(() => lw.liveWatches === 1, "a watch");
    lw.expire();
    await until(() => lw.lists === 2, "the relist");
    const rest: string[] = [];
    for (let i = 0; i < 3; i++) rest.push(describe((await changes.next()).value!));
    assert.deepEqual(rest, ["add ns/b@102", "synced", "delete ns/a tombstone"]);
    await changes.return!();
  } finally {
    ac.abort();
    await done;
  }
});

test("waitForCacheSync resolves true once all synced, false on abort", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const a = new Informer(lw, { ...FAST, name: "a", onError: () => {} });
  const b = new Informer(lw, { ...FAST, name: "b", onError: () => {} });
  const never = new Informer(new FakeListerWatcher(), { onError: () => {} }); // never run
  const reg = a.addEventHandler(new Recorder());
  const ac = new AbortController();
  const done = Promise.all([a.run({ signal: ac.signal }), b.run({ signal: ac.signal })]);
  try {
    assert.equal(await waitForCacheSync(AbortSignal.timeout(3000), a, b, reg), true);
    const stop = new AbortController();
    const pending = waitForCacheSync(stop.signal, a, never);
    stop.abort();
    assert.equal(await pending, false);
    assert.equal(await waitForCacheSync(stop.signal, never), false);
  } finally {
    ac.abort();
    await done;
  }
});

test("a registration's waitForSync rejects when it is removed before syncing", async () => {
  const informer = new Informer(new FakeListerWatcher(), { onError: () => {} });
  const reg = informer.addEventHandler({});
  const waiting = reg.waitForSync();
  reg.remove();
  await assert.rejects(waiting, /removed/);
  const ac = new AbortController();
  ac.abort(new Error("stop"));
  await assert.rejects(informer.addEventHandler({}).waitForSync({ signal: ac.signal }), /stop/);
});

test("an initial list longer than the queue limit arrives whole and in order, not counted as overflow", async () => {
  const lw = new FakeListerWatcher(["a", "b", "c", "d", "e"].map((n) => obj(n)));
  let overflows = 0;
  const metrics: MetricsProvider = {
    reflector: () => ({ handlerQueueOverflow: () => void overflows++, dispose() {} }),
  };
  const informer = new Informer(lw, { ...FAST, metrics, onError: () => {}, maxQueueLength: 2 });
  const rec = new Recorder();
  const reg = informer.addEventHandler(rec);
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  try {
    await reg.waitForSync({ signal: AbortSignal.timeout(3000) });
    assert.deepEqual(rec.events.map((e) => e.split("@")[0]), [
      "add ns/a",
      "add ns/b",
      "add ns/c",
      "add ns/d",
      "add ns/e",
    ]);
    assert.equal(overflows, 0);
  } finally {
    ac.abort();
    await done;
  }
});
