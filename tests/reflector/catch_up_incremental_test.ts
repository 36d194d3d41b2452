/**
 * catchUp pays per change: it writes only what changed, nothing when
 * nothing did, and a list that does not fit its budget is saved page by
 * page and goes on next run (fake time throughout).
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { cm, ev, events } from "./_scripted_lister_watcher.ts";
import { bookmark, identity, many, paged, setup } from "./_catch_up_pages.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { checkpointCache } from "../../src/checkpoint/checkpoint_cache.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";

test("catchUp writes nothing when nothing changed, and only the changes (a log piece of O(k) bytes) when something did", async () => {
  const t = setup(many(2000), "50");
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  const first = await t.complete();
  assert.equal(first.saved?.written, "base");
  const baseBytes = first.saved!.bytes;
  assert.ok(baseBytes > 100_000, `${baseBytes} bytes`);

  // no change: the target is the checkpoint's version, nothing to watch, nothing to write
  t.store.reset();
  const quiet = await t.complete();
  assert.equal(quiet.complete, true);
  assert.equal(quiet.changes.length, 0);
  assert.equal(quiet.saved?.written, "none");
  assert.deepEqual(t.store.puts, []);

  // one change: one log piece and the head, bytes independent of the 2000 objects
  t.lw.resourceVersion = "51";
  const changed = cm("cm-00007", "51", { i: "changed" });
  t.lw.onWatch = (o) => events([ev("MODIFIED", changed)], o);
  t.store.reset();
  const one = await t.complete();
  assert.equal(one.complete, true);
  assert.deepEqual(one.changes.map((c) => `${c.type} ${c.key}`), ["update ns/cm-00007"]);
  assert.equal(one.saved?.written, "log");
  assert.equal(t.store.puts.length, 2, t.store.puts.join());
  assert.ok(t.store.bytes < 2_000, `${t.store.bytes} bytes for one change`);

  // 100 changes: still far below the snapshot
  t.lw.resourceVersion = "151";
  const hundred = many(100).map((o, i) =>
    ev("MODIFIED", {
      ...o,
      metadata: { ...o.metadata, resourceVersion: String(52 + i) },
      data: { i: "x" },
    })
  );
  t.lw.onWatch = (o) => events(hundred, o);
  t.store.reset();
  const more = await t.complete();
  assert.equal(more.changes.length, 100);
  assert.equal(more.saved?.written, "log");
  assert.ok(t.store.bytes < baseBytes / 10, `${t.store.bytes} bytes for 100 changes`);

  const loaded = await loadCheckpoint(t.store.storage, "k", identity);
  assert.equal(loaded?.resourceVersion, "151");
  assert.deepEqual(loaded?.items.length, 2000);
  const byName = new Map(loaded!.items.map((o) => [o.metadata.name, o]));
  assert.deepEqual(byName.get("cm-00007")?.data, { i: "x" });
  assert.deepEqual(byName.get("cm-00150")?.data, { i: "150" });
});

test("catchUp: a first list that does not fit the budget is saved page by page and goes on from its continue token next run", async () => {
  const t = setup(many(2000), "50");
  paged(t.lw);
  t.lw.onWatch = (o) => events([bookmark("50")], o);
  // 500 objects a page, 1 s each: 2.5 s fits two pages
  const first = t.run({ budgetMs: 2_500 });
  await t.clock.advance(2_500);
  await first.promise;
  const r1 = first.result!;
  assert.equal(r1.complete, false);
  assert.equal(r1.resourceVersion, "");
  assert.equal(r1.objects.size, 0);
  assert.deepEqual(r1.progress, { items: 1000, remaining: 1000 });
  assert.equal(r1.saved?.written, "pages");
  const stored = await loadCheckpoint(t.store.storage, "k", identity, { partial: true });
  assert.equal(stored?.partial?.items.length, 1000);
  assert.equal(stored?.partial?.continue, "c1000");
  assert.equal(
    await loadCheckpoint(t.store.storage, "k", identity),
    undefined,
    "nothing complete yet",
  );

  // the second run asks for the rest only
  const listsBefore = t.lw.of("list").length;
  const r2 = await t.complete({ budgetMs: 2_500 });
  const lists = t.lw.of("list").slice(listsBefore).map((c) => (c.options as ListOptions));
  assert.deepEqual(
    lists.filter((o) => o.limit !== 1).map((o) => o.continue),
    ["c1000", "c1500"],
  );
  assert.equal(r2.complete, true);
  assert.equal(r2.listed, "no-checkpoint");
  assert.equal(r2.objects.size, 2000);
  assert.equal(r2.changes.length, 2000);
  assert.equal(r2.progress, undefined);
  assert.equal(r2.saved?.written, "base");
  const loaded = await loadCheckpoint(t.store.storage, "k", identity, { partial: true });
  assert.equal(loaded?.items.length, 2000);
  assert.equal(loaded?.partial, undefined, "the pages are gone once the list is complete");
  assert.deepEqual(
    loaded!.items.map((o) => o.metadata.name),
    t.lw.objects.map((o) => o.metadata.name),
  );
});

test("catchUp: a saved list whose continue token expired (410) starts over, reported, and still saves its progress", async () => {
  const t = setup(many(2000), "50");
  paged(t.lw);
  const first = t.run({ budgetMs: 2_500 });
  await t.clock.advance(2_500);
  await first.promise;
  assert.equal(first.result?.progress?.items, 1000);
  paged(t.lw, { expireToken: "c1000" }); // the server compacted: the token is gone
  t.lw.resourceVersion = "60";
  const second = t.run({ budgetMs: 3_500 });
  await t.clock.advance(3_500);
  await second.promise;
  const r2 = second.result!;
  assert.ok(
    t.errors.some((e) =>
      e.error instanceof KubeStatusError && (e.error as KubeStatusError).code === 410
    ),
  );
  assert.equal(r2.complete, false);
  // 1 s for the refused token, then two pages of the new list
  assert.deepEqual(r2.progress, { items: 1000, remaining: 1000 });
  const stored = await loadCheckpoint(t.store.storage, "k", identity, { partial: true });
  assert.equal(stored?.partial?.resourceVersion, "60");
  assert.equal(stored?.partial?.items.length, 1000);
  assert.equal(stored?.partial?.items[0].metadata.name, "cm-00000");
});

test("catchUp: runs on one key at once catch up alike and write once (the others find the newer head and write nothing)", async () => {
  const t = setup(many(20), "50");
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  await t.complete();
  t.lw.resourceVersion = "51";
  const changed = cm("cm-00003", "51", { i: "new" });
  t.lw.onWatch = (o) => events([ev("MODIFIED", changed)], o);
  t.store.reset();
  const runs = Array.from({ length: 5 }, () => t.run());
  while (runs.some((r) => !r.settled)) await t.clock.advance(100);
  for (const r of runs) {
    assert.equal(r.result?.complete, true);
    assert.deepEqual(r.result?.changes.map((c) => c.key), ["ns/cm-00003"]);
  }
  assert.deepEqual(
    runs.map((r) => r.result?.saved?.written).sort(),
    ["log", "none", "none", "none", "none"],
  );
  assert.equal(t.store.puts.filter((k) => k === "k").length, 1, "one head write");
});

test("catchUp: a checkpoint ahead of the server (etcd restored from a backup) is replaced by the listed objects", async () => {
  const t = setup([cm("a", "5")], "900");
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  await t.complete();
  t.lw.resourceVersion = "40"; // the restored cluster is behind the checkpoint
  t.lw.objects = [cm("b", "30")];
  const r = await t.complete();
  assert.equal(r.listed, "ahead-of-server");
  assert.equal(r.saved?.written, "base");
  const loaded = await loadCheckpoint(t.store.storage, "k", identity);
  assert.equal(loaded?.resourceVersion, "40");
  assert.deepEqual(loaded?.items.map((o) => o.metadata.name), ["b"]);
});

test("catchUp with a cache: a warm run reads the head and the changes since, not every object", async () => {
  const t = setup(many(2000), "50");
  const gets: string[] = [];
  const inner = t.store.storage;
  const storage = {
    ...inner,
    get: (k: string, o?: { signal?: AbortSignal }) => (gets.push(k), inner.get(k, o)),
  };
  const cache = checkpointCache();
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  await t.complete({ storage, cache }); // lists, saves a snapshot, remembers it
  t.lw.resourceVersion = "51";
  t.lw.onWatch = (o) => events([ev("MODIFIED", cm("cm-00009", "51", { i: "new" }))], o);
  gets.length = 0;
  const warm = await t.complete({ storage, cache });
  assert.deepEqual(warm.changes.map((c) => c.key), ["ns/cm-00009"]);
  assert.equal(warm.objects.size, 2000);
  assert.ok(gets.every((k) => !k.includes("/base/")), `no snapshot read: ${gets.join()}`);
  // a cold process (no cache) gets the same objects from the storage
  const cold = await loadCheckpoint(inner, "k", identity);
  assert.deepEqual(
    cold!.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort(),
    [...warm.objects.values()].map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
      .sort(),
  );
});
