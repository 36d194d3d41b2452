import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { configMap, requestsAtLeast, requestsOf, settles, withReflector } from "../_harness.ts";
import { cm, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { UnexpectedKindError } from "../../src/api/errors.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { newNamespaceKeyedIndexerAndReflector } from "../../src/reflector/namespace_keyed_indexer_and_reflector.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";

test("reflector lists, syncs, then applies adds, updates and deletes from the watch", async () => {
  await withReflector({ seed: 20 }, async ({ server, store, reflector, converged }) => {
    await reflector.synced;
    assert.ok(reflector.hasSynced());
    assert.equal(store.list().length, 20);
    const lists = requestsOf(server, "list");
    assert.equal(
      lists[0].query.get("resourceVersion"),
      "0",
      "the first list is served from the cache",
    );
    assert.equal(lists[0].query.get("limit"), "500");
    server.create(configMap("new"));
    server.update({ ...configMap("cm-1", "fx", { changed: "yes" }) });
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-2" });
    await converged();
    assert.equal(store.getByKey("fx/cm-2"), undefined);
    assert.deepEqual((store.getByKey("fx/cm-1") as { data?: unknown }).data, { changed: "yes" });
    assert.equal(reflector.lastSyncResourceVersion, server.resourceVersion);
    assert.equal(store.byIndex("namespace", "fx").length, 20);
  });
});

test("reflector watches with bookmarks and a timeout drawn in [min, 2·min]", async () => {
  await withReflector(
    { reflector: { minWatchTimeoutMs: 300_000 } },
    async ({ server, reflector }) => {
      await reflector.synced;
      const q = (await requestsAtLeast(server, "watch", 1))[0].query;
      assert.equal(q.get("allowWatchBookmarks"), "true");
      assert.equal(q.get("resourceVersion"), reflector.lastSyncResourceVersion);
      const t = Number(q.get("timeoutSeconds"));
      assert.ok(t >= 300 && t <= 600, `timeoutSeconds ${t}`);
    },
  );
});

test("reflector rewatches from the last RV without a relist when the watch closes cleanly (scenario 1)", async () => {
  await withReflector({ server: { maxWatchMs: 150 } }, async ({ server, reflector, converged }) => {
    await reflector.synced;
    server.create(configMap("a1"));
    await requestsAtLeast(server, "watch", 3);
    server.create(configMap("a2"));
    await requestsAtLeast(server, "watch", 5);
    await converged();
    assert.equal(requestsOf(server, "list").length, 1, "one LIST in total");
    const watches = requestsOf(server, "watch");
    for (let i = 1; i < watches.length; i++) {
      assert.notEqual(watches[i].query.get("resourceVersion"), "0");
      assert.notEqual(watches[i].query.get("resourceVersion"), "");
    }
  });
});

test("reflector relists from the last synced RV after a 410 ERROR event mid-watch (scenario 2)", async () => {
  await withReflector({}, async ({ server, store, reflector, errors, until, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    server.create(configMap("x1"));
    await until(() => store.getByKey("fx/x1") !== undefined, "x1 seen");
    const synced = reflector.lastSyncResourceVersion;
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.endWatches();
    const lists = await requestsAtLeast(server, "list", 2); // the relist
    assert.equal(lists[1].query.get("resourceVersion"), synced);
    server.create(configMap("x2"));
    await converged();
    assert.equal(requestsOf(server, "list").length, 2, "one relist");
    assert.ok(errors.some((e) => e.error instanceof KubeStatusError && e.error.code === 410));
  });
});

test("reflector relists when the watch start is answered with HTTP 410 (scenario 3)", async () => {
  await withReflector({
    beforeStart: (s) => void s.inject({ verb: "watch", fault: { kind: "status", code: 410 } }),
  }, async ({ server, reflector, errors, converged }) => {
    await reflector.synced;
    await requestsAtLeast(server, "list", 2); // the relist
    server.create(configMap("after"));
    await converged();
    assert.equal(requestsOf(server, "list").length, 2, "one relist");
    const err = errors.find((e) => e.error instanceof KubeStatusError)?.error as KubeStatusError;
    assert.equal(err.code, 410);
    assert.equal(err.reason, "Expired");
  });
});

test("reflector sees deletes made while disconnected when it relists (scenario 11)", async () => {
  await withReflector(
    { seed: 10, server: { historySize: 5 } },
    async ({ server, store, reflector, converged }) => {
      await reflector.synced;
      await server.waitForWatch();
      await server.goDown();
      for (let i = 0; i < 6; i++) {
        server.delete({
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: "fx",
          name: `cm-${i}`,
        });
      }
      for (let i = 0; i < 6; i++) server.create(configMap(`fresh-${i}`));
      server.compact();
      await server.comeUp();
      await converged();
      assert.ok(requestsOf(server, "list").length >= 2, "the reflector relisted");
      assert.equal(store.getByKey("fx/cm-0"), undefined);
    },
  );
});

test("reflector advances its RV on BOOKMARK without touching the store (scenario 12)", async () => {
  const bookmarks: string[] = [];
  await withReflector(
    {
      namespace: "fx",
      server: { bookmarkIntervalMs: 30 },
      reflector: { observer: { event: (type, rv) => type === "BOOKMARK" && bookmarks.push(rv) } },
    },
    async ({ server, store, reflector, until }) => {
      await reflector.synced;
      const before = store.list();
      // changes to another namespace move the global RV; the watch sees only bookmarks
      server.create(configMap("elsewhere", "other"));
      const bookmarkRv = server.resourceVersion;
      await until(() => bookmarks.includes(bookmarkRv), "a bookmark at the new RV");
      server.endWatches(); // after the bookmark: the rewatch starts from it
      await server.waitForRequests((r) =>
        r.verb === "watch" && r.query.get("resourceVersion") === bookmarkRv
      );
      assert.equal(reflector.lastSyncResourceVersion, bookmarkRv, "RV at the bookmark");
      assert.deepEqual(store.list(), before, "store untouched");
    },
  );
});

test("reflector rejects objects of the wrong kind and keeps the rest (scenario 15)", async () => {
  await withReflector({}, async ({ server, store, reflector, errors, until, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    const secret = {
      type: "ADDED",
      object: {
        kind: "Secret",
        apiVersion: "v1",
        metadata: { name: "s", namespace: "fx", resourceVersion: server.resourceVersion },
      },
    };
    server.inject({
      verb: "watch",
      fault: { kind: "raw", data: JSON.stringify(secret) + "\n", then: "continue" },
    });
    server.endWatches();
    await until(() => errors.some((e) => e.error instanceof UnexpectedKindError), "a kind error");
    server.create(configMap("good"));
    await converged();
    assert.equal(store.getByKey("fx/s"), undefined);
    assert.ok(store.list().every((o) => o.kind === undefined || o.kind === "ConfigMap"));
  });
});

test("reflector treats an ADDED for a known object as an update, without duplicates (scenario 16)", async () => {
  await withReflector({ seed: 3 }, async ({ server, store, reflector, until }) => {
    await reflector.synced;
    await server.waitForWatch();
    const replay = {
      type: "ADDED",
      object: {
        ...configMap("cm-1", "fx", { replayed: "1" }),
        metadata: { name: "cm-1", namespace: "fx", resourceVersion: server.resourceVersion },
      },
    };
    server.inject({
      verb: "watch",
      fault: { kind: "raw", data: JSON.stringify(replay) + "\n", then: "continue" },
    });
    server.endWatches();
    await until(
      () =>
        (store.getByKey("fx/cm-1") as { data?: Record<string, string> })?.data?.replayed === "1",
      "replayed add applied",
    );
    assert.equal(store.list().length, 3);
    assert.equal(store.listKeys().filter((k) => k === "fx/cm-1").length, 1);
  });
});

test("reflector resyncs the store every period without any request, and skips it while shouldResync says no (scenario 22, fake time)", async () => {
  let resyncs = 0;
  class CountingIndexer extends Indexer<KubeObject> {
    override resync(): void {
      resyncs++;
    }
  }
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock); // its watch stays open and quiet
  lw.objects = [cm("a", "5")];
  let allow = true;
  const reflector = new Reflector(lw, new CountingIndexer(metaNamespaceKeyFunc), {
    clock,
    random: () => 0,
    useStreamingList: false,
    resyncPeriodMs: 40,
    shouldResync: () => allow,
    onError: () => {},
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  try {
    await clock.flush();
    await reflector.synced;
    const calls = lw.calls.length; // the list and the watch
    await clock.advance(39);
    assert.equal(resyncs, 0, "not before the period");
    await clock.advance(1);
    assert.equal(resyncs, 1, "one at the period");
    await clock.advance(80);
    assert.equal(resyncs, 3, "one each period");
    allow = false;
    await clock.advance(200);
    assert.equal(resyncs, 3, "shouldResync=false skips resyncs");
    allow = true;
    await clock.advance(40);
    assert.equal(resyncs, 4, "and they resume");
    assert.equal(lw.calls.length, calls, "resync does no I/O");
  } finally {
    ac.abort();
    await done;
  }
});

test("reflector.run resolves on abort while listing, watching and backing off (scenario 17)", async () => {
  // On a ManualClock that never moves, no deadline or backoff can end a
  // stalled list or a wait: run() settling shows the abort ended it.
  // while listing: the list stalls forever
  await withReflector({
    start: false,
    reflector: { clock: new ManualClock() },
    beforeStart: (s) => void s.inject({ verb: "list", fault: { kind: "stall" } }),
  }, async ({ server, reflector }) => {
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    await requestsAtLeast(server, "list", 1);
    ac.abort();
    await settles(done, "run() aborted while listing");
    assert.equal(reflector.hasSynced(), false);
    assert.equal(requestsOf(server, "list").length, 1);
  });
  // while watching
  await withReflector({
    start: false,
    reflector: { clock: new ManualClock() },
  }, async ({ server, reflector }) => {
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    await server.waitForWatch();
    ac.abort();
    await settles(done, "run() aborted while watching");
    assert.equal(requestsOf(server, "watch").length, 1);
  });
  // while backing off after a 500
  await withReflector({
    start: false,
    reflector: { clock: new ManualClock() },
    beforeStart: (s) => void s.inject({ verb: "list", fault: { kind: "status", code: 500 } }),
  }, async ({ server, reflector, errors, waits, until }) => {
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    await until(() => waits.length === 1, "the backoff after the failed list");
    assert.equal(errors.length, 1);
    ac.abort();
    await settles(done, "run() aborted while backing off");
    assert.equal(requestsOf(server, "list").length, 1, "no retry");
  });
});

test("reflector options are validated at construction", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  assert.throws(() => new Reflector(lw, store, { resyncPeriodMs: -1 }), RangeError);
  assert.throws(() => new Reflector(lw, store, { pageSize: 1.5 }), RangeError);
  assert.throws(() => new Reflector(lw, store, { minWatchTimeoutMs: 0 }), RangeError);
  assert.throws(() => new Reflector(lw, store, { backoff: { factor: 0 } }), RangeError);
  assert.throws(() => new Reflector(lw, store, { expectedKind: "" }), TypeError);
  // deno-lint-ignore no-explicit-any
  assert.throws(() => new Reflector({} as any, store), TypeError);
});

test("newNamespaceKeyedIndexerAndReflector fills a namespace-indexed store", async () => {
  await withReflector({ start: false }, async ({ server, client, abort }) => {
    server.create(configMap("other-1", "other"));
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    const { indexer, reflector } = newNamespaceKeyedIndexerAndReflector(lw, {
      expectedKind: "ConfigMap",
      onError: () => {},
    });
    const done = reflector.run({ signal: abort.signal });
    await reflector.waitForSync({ signal: abort.signal });
    assert.equal(indexer.byIndex("namespace", "other").length, 1);
    assert.equal(indexer.byIndex("namespace", "fx").length, 5);
    abort.abort();
    await done;
  });
});

test("a throwing observer never breaks the reflector", async () => {
  const boom = () => {
    throw new Error("observer bug");
  };
  await withReflector({
    reflector: {
      observer: { listDone: boom, watchStart: boom, event: boom, watchEnd: boom, relist: boom },
    },
  }, async ({ server, reflector, converged }) => {
    await reflector.synced;
    server.create(configMap("seen"));
    await converged();
  });
});

test("after an API server restart the reflector relists once from the watch cache and converges (scenario 19)", async () => {
  await withReflector(
    { seed: 30, reflector: { pageSize: 10 } },
    async ({ server, reflector, errors, converged }) => {
      await reflector.synced;
      await server.waitForWatch();
      const synced = reflector.lastSyncResourceVersion;
      // the restart: down, changes meanwhile, back up with a fresh watch cache
      // that forgets older versions, while etcd still holds version `synced`
      await server.goDown();
      for (let i = 0; i < 5; i++) server.create(configMap(`while-down-${i}`));
      server.restartWatchCache();
      await server.comeUp();
      await converged();
      const lists = requestsOf(server, "list");
      assert.ok(lists.length <= 3, `${lists.length} lists: no list/watch loop`);
      const relist = lists[1];
      assert.equal(
        relist.query.get("resourceVersion"),
        synced,
        "relist from the last synced version",
      );
      assert.equal(
        relist.query.get("limit"),
        null,
        "unpaginated, so the watch cache serves it (not an exact etcd read)",
      );
      assert.ok(errors.some((e) => e.error instanceof KubeStatusError && e.error.code === 410));
    },
  );
});

test("a second run() resumes from the last synced version instead of resourceVersion=0", async () => {
  await withReflector({ start: false }, async ({ server, store, reflector, until }) => {
    const first = new AbortController();
    let done = reflector.run({ signal: first.signal });
    await reflector.synced;
    server.create(configMap("seen"));
    await until(() => store.getByKey("fx/seen") !== undefined, "caught up");
    assert.equal(reflector.lastSyncResourceVersion, server.resourceVersion);
    first.abort();
    await done;
    const rv = reflector.lastSyncResourceVersion;
    const second = new AbortController();
    done = reflector.run({ signal: second.signal });
    const lists = await requestsAtLeast(server, "list", 2); // the second run's list
    assert.equal(lists[1].query.get("resourceVersion"), rv);
    second.abort();
    await done;
  });
});

test("waitForSync rejects when run() ends before the first sync, and an abandoned waiter leaves nothing behind", async () => {
  await withReflector({
    start: false,
    beforeStart: (s) =>
      void s.inject({ verb: "list", times: Infinity, fault: { kind: "status", code: 403 } }),
  }, async ({ server, reflector }) => {
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    const waiting = reflector.waitForSync();
    const giveUp = new AbortController();
    const abandoned = reflector.waitForSync({ signal: giveUp.signal });
    giveUp.abort(new Error("gave up"));
    await assert.rejects(abandoned, /gave up/);
    await requestsAtLeast(server, "list", 1); // a failed list
    ac.abort();
    await done;
    await assert.rejects(waiting, /stopped before its first sync/);
  });
});
