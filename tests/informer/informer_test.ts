import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { InformerOptions } from "../../src/informer/informer_options.ts";
import { dropManagedFields } from "../../src/informer/transform.ts";
import type { ErrorPhase } from "../../src/reflector/watcher_options.ts";
import { FakeListerWatcher, FAST, obj, until } from "./_fake_lister_watcher.ts";
import { Recorder } from "./_recorder.ts";

interface Ctx {
  informer: Informer;
  errors: { error: unknown; phase: ErrorPhase }[];
  done: Promise<void>;
  abort: AbortController;
}

async function withInformer(
  lw: FakeListerWatcher,
  options: InformerOptions<KubeObject> & { before?: (i: Informer) => void },
  fn: (ctx: Ctx) => Promise<void>,
): Promise<void> {
  const errors: Ctx["errors"] = [];
  const informer = new Informer(lw, {
    name: "test",
    ...FAST,
    onError: (error, phase) => errors.push({ error, phase }),
    ...options,
  });
  options.before?.(informer);
  const abort = new AbortController();
  const done = informer.run({ signal: abort.signal });
  try {
    await fn({ informer, errors, done, abort });
  } finally {
    abort.abort();
    await done;
  }
}

const three = () => [obj("a"), obj("b"), obj("c", "other")];

test("informer delivers the initial list as adds, then the registration has synced", async () => {
  const lw = new FakeListerWatcher(three());
  const rec = new Recorder();
  let reg!: ReturnType<Informer["addEventHandler"]>;
  await withInformer(
    lw,
    { before: (i) => (reg = i.addEventHandler(rec)) },
    async ({ informer }) => {
      await reg.waitForSync({ signal: AbortSignal.timeout(3000) });
      assert.ok(informer.hasSynced());
      assert.deepEqual(rec.events, [
        "add ns/a@101 initial",
        "add ns/b@102 initial",
        "add other/c@103 initial",
      ]);
    },
  );
});

test("informer turns ADDED, MODIFIED and DELETED into add, update(old, new) and delete with the final state", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const rec = new Recorder();
  await withInformer(lw, { before: (i) => i.addEventHandler(rec) }, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply(obj("b"));
    lw.apply({ ...obj("a"), data: { k: "v" } });
    lw.remove("ns/b");
    await until(() => rec.events.length === 4, "four events");
    assert.deepEqual(rec.events, [
      "add ns/a@101 initial",
      "add ns/b@102",
      "update ns/a@101->103",
      "delete ns/b@104",
    ]);
    assert.deepEqual(informer.indexer.listKeys(), ["ns/a"]);
  });
});

test("scenario 11: objects deleted while disconnected reach handlers as tombstones after the relist", async () => {
  const lw = new FakeListerWatcher(three());
  const rec = new Recorder();
  await withInformer(
    lw,
    { before: (i) => i.addEventHandler(rec) },
    async ({ informer, errors }) => {
      await informer.waitForSync();
      await until(() => lw.liveWatches === 1, "a watch");
      lw.behindTheWatch((objects, nextRv) => {
        objects.delete("ns/a");
        objects.delete("other/c");
        const b = objects.get("ns/b")!;
        objects.set("ns/b", { ...b, metadata: { ...b.metadata, resourceVersion: nextRv() } });
        objects.set("ns/d", {
          ...obj("d"),
          metadata: { ...obj("d").metadata, resourceVersion: nextRv() },
        });
      });
      lw.expire();
      await until(() => lw.lists === 2 && rec.events.length === 7, "the relist's changes");
      assert.deepEqual(rec.events.slice(3), [
        "update ns/b@102->104",
        "add ns/d@105",
        "tombstone ns/a@101",
        "tombstone other/c@103",
      ]);
      const tombstones = rec.deleted.filter((d) =>
        d instanceof DeletedFinalStateUnknown
      ) as DeletedFinalStateUnknown<KubeObject>[];
      assert.equal(tombstones.length, 2);
      assert.equal(
        tombstones[0].obj.metadata.name,
        "a",
        "the tombstone carries the last known object",
      );
      assert.deepEqual(
        new Map(
          informer.indexer.list().map((
            o,
          ) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]),
        ),
        lw.state(),
      );
      assert.ok(errors.some((e) => e.phase === "watch"), "the 410 was reported");
    },
  );
});

test("a relist that finds objects unchanged announces nothing for them", async () => {
  const lw = new FakeListerWatcher(three());
  const rec = new Recorder();
  await withInformer(lw, { before: (i) => i.addEventHandler(rec) }, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.expire();
    await until(() => lw.lists === 2 && lw.liveWatches === 1, "relist and rewatch");
    lw.apply(obj("z"));
    await until(() => rec.events.length === 4, "the add after the relist");
    assert.deepEqual(rec.events.slice(3), ["add ns/z@104"]);
  });
});

test("scenario 12: bookmarks advance the resourceVersion and never reach handlers", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const rec = new Recorder();
  await withInformer(lw, { before: (i) => i.addEventHandler(rec) }, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.bookmark();
    lw.bookmark();
    await until(() => informer.lastSyncResourceVersion === "103", "the bookmark's version");
    lw.close(); // end the watch: the informer must come back from the bookmark's version
    await until(() => lw.watchRvs.length === 2, "a second watch");
    assert.equal(lw.watchRvs[1], "103");
    assert.equal(lw.lists, 1);
    assert.deepEqual(rec.events, ["add ns/a@101 initial"]);
    assert.deepEqual(informer.indexer.listKeys(), ["ns/a"]);
  });
});

test("scenario 22: resync re-delivers every object as update(old === new) without any request", async () => {
  const lw = new FakeListerWatcher(three());
  const rec = new Recorder();
  await withInformer(
    lw,
    { resyncPeriodMs: 15, before: (i) => i.addEventHandler(rec) },
    async ({ informer }) => {
      await informer.waitForSync();
      await until(() => rec.of("sync").length >= 6, "two resyncs");
      assert.deepEqual(rec.of("sync").slice(0, 3).sort(), [
        "sync ns/a@101",
        "sync ns/b@102",
        "sync other/c@103",
      ]);
      assert.equal(lw.lists, 1, "no list issued");
      assert.equal(lw.watchRvs.length, 1, "no watch issued");
    },
  );
});

test("a handler that throws or rejects is reported and does not affect the others", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const rec = new Recorder();
  let thrown = 0;
  let rejected = 0;
  await withInformer(lw, {
    before: (i) => {
      const boom = () => {
        thrown++;
        throw new Error("sync boom");
      };
      i.addEventHandler({ onAdd: boom, onUpdate: boom });
      i.addEventHandler({
        onAdd: async () => {
          rejected++;
          await null;
          throw new Error("async boom");
        },
      });
      i.addEventHandler(rec);
    },
  }, async ({ informer, errors }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply({ ...obj("a"), data: { x: "1" } });
    lw.apply(obj("b"));
    await until(() => rec.events.length === 3 && rejected === 2, "every event");
    await until(() => thrown === 3, "the throwing handler still gets later events");
    const handlerErrors = errors.filter((e) => e.phase === "handler").map((e) =>
      (e.error as Error).message
    ).sort();
    assert.deepEqual(handlerErrors, [
      "async boom",
      "async boom",
      "sync boom",
      "sync boom",
      "sync boom",
    ]);
  });
});

test("a handler added after sync first gets the current objects as adds", async () => {
  const lw = new FakeListerWatcher(three());
  await withInformer(lw, {}, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    const rec = new Recorder();
    const reg = informer.addEventHandler(rec);
    assert.equal(reg.hasSynced(), false);
    lw.apply(obj("d"));
    await reg.waitForSync({ signal: AbortSignal.timeout(3000) });
    await until(() => rec.events.length === 4, "the later add");
    assert.deepEqual(rec.events, [
      "add ns/a@101 initial",
      "add ns/b@102 initial",
      "add other/c@103 initial",
      "add ns/d@104",
    ]);
  });
});

test("the transform runs before the cache: memory, listers and handlers see transformed objects", async () => {
  const withFields = (o: KubeObject) => ({
    ...o,
    metadata: { ...o.metadata, managedFields: [{ manager: "kubectl" }] },
  });
  const lw = new FakeListerWatcher([withFields(obj("a"))]);
  const seen: KubeObject[] = [];
  await withInformer(lw, {
    transform: dropManagedFields,
    before: (i) =>
      i.addEventHandler({ onAdd: (o) => void seen.push(o), onUpdate: (_, o) => void seen.push(o) }),
  }, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    lw.apply(withFields(obj("b")));
    lw.apply(withFields({ ...obj("a"), data: { v: "2" } }));
    await until(() => seen.length === 3, "three deliveries");
    for (const o of [...seen, ...informer.indexer.list(), informer.lister().get("ns", "a")!]) {
      assert.equal(o.metadata.managedFields, undefined);
    }
  });
});

test("a transform that throws skips that object and reports it", async () => {
  const lw = new FakeListerWatcher([obj("a"), obj("bad")]);
  await withInformer(lw, {
    transform: (o) => {
      if (o.metadata.name === "bad") throw new Error("cannot transform");
      return o;
    },
  }, async ({ informer, errors }) => {
    await informer.waitForSync();
    assert.deepEqual(informer.indexer.listKeys(), ["ns/a"]);
    assert.deepEqual(errors.map((e) => [e.phase, (e.error as Error).message]), [[
      "store",
      "cannot transform",
    ]]);
  });
});

test("an async handler is awaited: its events arrive in order, one at a time", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const seen: string[] = [];
  let active = 0;
  let maxActive = 0;
  const slow = async (label: string) => {
    active++;
    maxActive = Math.max(maxActive, active);
    await new Promise((r) => setTimeout(r, seen.length % 3));
    seen.push(label);
    active--;
  };
  await withInformer(lw, {
    before: (i) =>
      i.addEventHandler({
        onAdd: (o) => slow(`add ${o.metadata.name}`),
        onUpdate: (_, o) => slow(`update ${o.metadata.resourceVersion}`),
      }),
  }, async ({ informer }) => {
    await informer.waitForSync();
    await until(() => lw.liveWatches === 1, "a watch");
    for (let i = 0; i < 10; i++) lw.apply({ ...obj("a"), data: { i: String(i) } });
    await until(() => seen.length === 11, "all events");
    assert.deepEqual(seen, ["add a", ...Array.from({ length: 10 }, (_, i) => `update ${102 + i}`)]);
    assert.equal(maxActive, 1);
  });
});

test("remove() stops deliveries to that handler only", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  const kept = new Recorder();
  const removed = new Recorder();
  await withInformer(lw, {}, async ({ informer }) => {
    informer.addEventHandler(kept);
    const reg = informer.addEventHandler(removed);
    await informer.waitForSync();
    await reg.waitForSync();
    reg.remove();
    assert.equal(reg.removed, true);
    lw.apply(obj("b"));
    await until(() => kept.events.length === 2, "the add");
    assert.deepEqual(removed.events, ["add ns/a@101 initial"]);
  });
});

test("run() resolves after abort once a handler call in progress has settled", async () => {
  const lw = new FakeListerWatcher([obj("a")]);
  let finished = false;
  let started = false;
  const informer = new Informer(lw, {
    ...FAST,
    onError: () => {},
  });
  informer.addEventHandler({
    onAdd: async () => {
      started = true;
      await new Promise((r) => setTimeout(r, 20));
      finished = true;
    },
  });
  const abort = new AbortController();
  const done = informer.run({ signal: abort.signal });
  await until(() => started, "the handler call");
  abort.abort();
  await done;
  assert.equal(finished, true);
  await assert.rejects(informer.run({ signal: new AbortController().signal }), /already/);
  assert.equal(
    informer.addEventHandler({}).removed,
    true,
    "a handler added after stop is removed at once",
  );
});

test("informer options are validated at construction", () => {
  const lw = new FakeListerWatcher();
  assert.throws(() => new Informer(lw, { maxQueueLength: 0 }), RangeError);
  assert.throws(() => new Informer(lw, { metrics: {} as never }), TypeError);
  assert.throws(() => new Informer(lw, { onError: 1 as never }), TypeError);
  assert.throws(() => new Informer(lw, { transform: 1 as never }), TypeError);
  assert.throws(() => new Informer(lw).addEventHandler({}, { maxQueueLength: 1.5 }), RangeError);
});
