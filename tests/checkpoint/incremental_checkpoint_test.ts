import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { checkpointBytes, configMaps, dec, IDENTITY } from "./_helpers.ts";
import { MapStorage, namedPieces, storedHead, storedPieces } from "./_map_storage.ts";
import { Model, saveModel } from "./_model.ts";

/** Loads "k" and checks it holds exactly the model's objects at its version. */
async function assertHolds(storage: MapStorage, model: Model, what: string): Promise<void> {
  const loaded = await loadCheckpoint(storage, "k", IDENTITY);
  assert.equal(loaded?.resourceVersion, model.resourceVersion, what);
  assert.deepEqual(loaded?.items, model.items, what);
}

/** Checks that every piece stored for "k" is one its head names (the others were deleted). */
function assertNoObsoletePieces(storage: MapStorage, what: string): void {
  const p = storedPieces(storage.values, "k");
  assert.deepEqual([...p.base, ...p.log, ...p.page].sort(), namedPieces(storage.values, "k"), what);
}

test("incremental checkpoint: a run with no change writes nothing", async () => {
  const storage = new MapStorage();
  const model = new Model(1000);
  let now = 1_000_000;
  await saveModel(storage, model, undefined, "", { now: () => now });
  const before = new Map(storage.values);
  storage.resetCounts();
  for (let run = 0; run < 5; run++) {
    const changes = model.step(0);
    now += 8_000; // every 8 s: 40 s in all, below versionMarkerIntervalMs (45 s)
    // the changes since the stored version (which a save with no change leaves as it was)
    const saved = await saveModel(storage, model, changes, "1000", { now: () => now });
    assert.equal(saved.written, "none", `run ${run}`);
    assert.equal(saved.bytes, 0);
    assert.equal(saved.resourceVersion, "1000", "what is stored: the changes are since that");
  }
  assert.equal(storage.puts.length, 0, "no put");
  assert.equal(storage.deletes.length, 0, "no delete");
  assert.deepEqual(storage.gets, Array(5).fill("k"), "each run read the head only");
  assert.deepEqual(storage.values, before);
  // the same version again, with or without changes: nothing either
  const same = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "1000",
    items: model.items,
  });
  assert.equal(same.written, "none");
  assert.equal(storage.puts.length, 0);
});

/** The bytes one run with `k` changes writes over a checkpoint of `objects` objects. */
async function bytesForChanges(
  objects: number,
  k: number,
): Promise<{ bytes: number; base: number }> {
  const storage = new MapStorage();
  const model = new Model(objects);
  const first = await saveModel(storage, model, undefined, "");
  storage.resetCounts();
  const since = model.resourceVersion;
  const saved = await saveModel(storage, model, model.step(k), since);
  assert.equal(saved.written, "log", `${k} changes over ${objects} objects`);
  assert.equal(saved.bytes, storage.bytesWritten);
  assert.equal(storage.puts.length, 2, "a log piece and the head");
  await assertHolds(storage, model, `${k} changes over ${objects} objects`);
  return { bytes: saved.bytes, base: first.bytes };
}

test("incremental checkpoint: k changes write O(k) bytes, whatever the number of objects", async () => {
  const one500 = await bytesForChanges(500, 1);
  const one5000 = await bytesForChanges(5000, 1);
  const hundred500 = await bytesForChanges(500, 100);
  const hundred5000 = await bytesForChanges(5000, 100);
  assert.ok(one5000.base > 2_000_000, `a snapshot of ${one5000.base} bytes`);
  // one change: the head and one object, about a kilobyte
  assert.ok(one5000.bytes < 2000, `1 change wrote ${one5000.bytes} bytes`);
  // the objects' number shows only in the head's counts (a few digits)
  assert.ok(Math.abs(one5000.bytes - one500.bytes) < 16, `${one500.bytes} vs ${one5000.bytes}`);
  // (other objects change: their names and sizes differ by a few bytes)
  assert.ok(
    Math.abs(hundred5000.bytes - hundred500.bytes) < hundred500.bytes * 0.05,
    `${hundred500.bytes} vs ${hundred5000.bytes}`,
  );
  // 100 changes: about 100 times what one change adds to the head
  const perChange = (hundred5000.bytes - one5000.bytes) / 99;
  assert.ok(perChange > 100 && perChange < 1000, `${perChange} bytes per change`);
  assert.ok(hundred5000.bytes < one5000.base / 20);
});

test("incremental checkpoint: the log is compacted into a new snapshot after maxLogEntries saves", async () => {
  const storage = new MapStorage();
  const model = new Model(50);
  const options = { maxLogEntries: 3, maxLogRatio: 100 };
  await saveModel(storage, model, undefined, "", options);
  const written: string[] = [];
  for (let run = 1; run <= 8; run++) {
    const since = model.resourceVersion;
    const saved = await saveModel(storage, model, model.step(4), since, options);
    written.push(saved.written);
    await assertHolds(storage, model, `run ${run}`);
    assertNoObsoletePieces(storage, `run ${run}`);
    assert.ok(storedHead(storage.values, "k").log.length <= 3);
  }
  assert.deepEqual(written, ["log", "log", "log", "base", "log", "log", "log", "base"]);
  assert.equal(storedPieces(storage.values, "k").base.length, 1);
});

test("incremental checkpoint: the log is compacted once its bytes pass maxLogRatio of the snapshot's", async () => {
  const storage = new MapStorage();
  const model = new Model(40);
  await saveModel(storage, model, undefined, "");
  const written: string[] = [];
  for (let run = 1; run <= 12; run++) {
    const since = model.resourceVersion;
    const saved = await saveModel(storage, model, model.step(3), since);
    written.push(saved.written);
    await assertHolds(storage, model, `run ${run}`);
    assertNoObsoletePieces(storage, `run ${run}`);
    const head = storedHead(storage.values, "k");
    const logBytes = head.log.reduce((n, e) => n + e.bytes, 0);
    assert.ok(logBytes <= 0.5 * head.base!.bytes, `run ${run}: ${logBytes} log bytes`);
  }
  assert.ok(written.includes("log") && written.includes("base"), written.join(" "));
  assert.ok(written.indexOf("base") < 16, "before maxLogEntries");
});

test("incremental checkpoint: with no change, only the head is written once it is versionMarkerIntervalMs old", async () => {
  const storage = new MapStorage();
  const model = new Model(100);
  let now = Date.parse("2030-01-01T00:00:00Z");
  const start = now;
  // the interval given, so the test does not follow the default
  const options = { now: () => now, maxLogRatio: 100, versionMarkerIntervalMs: 60_000 };
  await saveModel(storage, model, undefined, "", options);
  let stored = model.resourceVersion;
  const run = async (changes: number, at: number) => {
    now = start + at;
    storage.resetCounts();
    // the changes since the stored version (which a save with no change may leave as it was)
    const saved = await saveModel(storage, model, model.step(changes), stored, options);
    stored = saved.resourceVersion;
    return saved;
  };
  assert.equal((await run(0, 59_999)).written, "none");
  assert.equal(storage.puts.length, 0);
  const marked = await run(0, 60_000);
  assert.equal(marked.written, "version");
  assert.deepEqual(storage.puts.map((p) => p.key), ["k"], "the head only");
  assert.ok(marked.bytes < 1000, `${marked.bytes} bytes`);
  assert.equal(storedHead(storage.values, "k").resourceVersion, model.resourceVersion);
  await assertHolds(storage, model, "after the marker");
  assert.equal(
    (await loadCheckpoint(storage, "k", IDENTITY))?.savedAt,
    new Date(start + 60_000).toISOString(),
  );
  // the interval counts from the marker
  assert.equal((await run(0, 119_999)).written, "none");
  // a change after a marker: its log piece starts where the marker moved the head
  assert.equal((await run(2, 120_500)).written, "log");
  await assertHolds(storage, model, "a change after the marker");
  assert.equal((await run(0, 200_000)).written, "version");
  assert.equal((await run(1, 200_001)).written, "log");
  await assertHolds(storage, model, "a change after a second marker");
});

test("incremental checkpoint: a version 1 checkpoint at the key still loads, and the next save replaces it with a head", async () => {
  const storage = new MapStorage();
  const items = configMaps(10);
  storage.values.set("k", await checkpointBytes(items, IDENTITY, "700"));
  const loaded = await loadCheckpoint(storage, "k", IDENTITY);
  assert.equal(loaded?.resourceVersion, "700");
  assert.deepEqual(loaded?.items, items);
  assert.equal(loaded?.values, 1);
  // a save with changes since it: no head to append to, so a snapshot and a head
  const saved = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "701",
    items: items.slice(1),
    changes: { since: "700", objects: [["default/cm-0", undefined]] },
  });
  assert.equal(saved.written, "base");
  assert.equal(storedHead(storage.values, "k").version, 2);
  assert.ok(dec.decode(storage.values.get("k")!).length < 1000, "the key holds a small head");
  const again = await loadCheckpoint(storage, "k", IDENTITY);
  assert.equal(again?.resourceVersion, "701");
  assert.deepEqual(again?.items, items.slice(1));
  assert.equal(again?.values, 2);
});

test("incremental checkpoint: a list in progress is saved page by page and loads only with { partial: true }", async () => {
  const storage = new MapStorage();
  const all = configMaps(9);
  const page = (i: number) => all.slice(i * 3, i * 3 + 3);
  const progress = (i: number, since?: string) => ({
    identity: IDENTITY,
    resourceVersion: "",
    items: [],
    progress: { items: page(i), continue: `c${i + 1}`, resourceVersion: "900", since },
  });
  assert.equal((await saveCheckpoint(storage, "k", progress(0))).written, "pages");
  assert.equal(await loadCheckpoint(storage, "k", IDENTITY), undefined, "nothing complete");
  const first = await loadCheckpoint(storage, "k", IDENTITY, { partial: true });
  assert.equal(first?.resourceVersion, "");
  assert.deepEqual(first?.items, []);
  assert.deepEqual(first?.partial, { items: page(0), continue: "c1", resourceVersion: "900" });
  assert.equal((await saveCheckpoint(storage, "k", progress(1, "c1"))).written, "pages");
  // a run that went on from an older token: its pages are dropped
  assert.equal((await saveCheckpoint(storage, "k", progress(1, "c0"))).written, "none");
  const second = await loadCheckpoint(storage, "k", IDENTITY, { partial: true });
  assert.deepEqual(second?.partial?.items, [...page(0), ...page(1)]);
  assert.equal(second?.partial?.continue, "c2");
  assert.equal(storedPieces(storage.values, "k").page.length, 2);
  // the list completes: a snapshot, and the pages are deleted
  const done = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "900",
    items: all,
    listed: true,
  });
  assert.equal(done.written, "base");
  const complete = await loadCheckpoint(storage, "k", IDENTITY, { partial: true });
  assert.equal(complete?.resourceVersion, "900");
  assert.deepEqual(complete?.items, all);
  assert.equal(complete?.partial, undefined);
  assert.deepEqual(storedPieces(storage.values, "k").page, []);
  assertNoObsoletePieces(storage, "after the list");
  // a relist in progress next to the complete state: both load
  await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "900",
    items: all,
    progress: { items: page(2), continue: "d1", resourceVersion: "950" },
  });
  const both = await loadCheckpoint(storage, "k", IDENTITY, { partial: true });
  assert.equal(both?.resourceVersion, "900");
  assert.deepEqual(both?.items, all);
  assert.deepEqual(both?.partial?.items, page(2));
  assert.deepEqual((await loadCheckpoint(storage, "k", IDENTITY))?.items, all, "without partial");
});
