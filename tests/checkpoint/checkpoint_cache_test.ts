/**
 * A CheckpointCache lets a warm process read the head and the new log
 * pieces only; anything it cannot vouch for is read whole.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { checkpointCache } from "../../src/checkpoint/checkpoint_cache.ts";
import { IDENTITY } from "./_helpers.ts";
import { MapStorage } from "./_map_storage.ts";
import { Model, saveModel } from "./_model.ts";

const names = (items: { metadata: { name?: string } }[] | undefined) =>
  (items ?? []).map((o) => o.metadata.name).sort();

test("checkpoint cache: a warm load reads the head only, or the head and the new log pieces, and gives the same objects as a cold load", async () => {
  const storage = new MapStorage();
  const model = new Model(500);
  await saveModel(storage, model, undefined, "");
  const cache = checkpointCache();

  storage.gets.length = 0;
  const cold = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.equal(cold?.values, 2);
  assert.equal(storage.gets.length, 2, "the head and the snapshot");

  storage.gets.length = 0;
  const warm = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.deepEqual(storage.gets, ["k"], "the head only");
  assert.equal(warm?.values, 1);
  assert.deepEqual(names(warm?.items), names(model.items));
  assert.ok(warm!.bytes < 1000, `${warm!.bytes} bytes read`);

  // another process saves two log pieces: the warm load reads those two only
  let stored = model.resourceVersion;
  for (let i = 0; i < 2; i++) {
    const changes = model.step(3);
    await saveModel(storage, model, changes, stored);
    stored = model.resourceVersion;
  }
  storage.gets.length = 0;
  const after = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.equal(storage.gets.length, 3, storage.gets.join());
  assert.equal(after?.resourceVersion, model.resourceVersion);
  assert.deepEqual(names(after?.items), names(model.items));
  assert.deepEqual(
    after?.items.map((o) => o.metadata.resourceVersion).sort(),
    model.items.map((o) => o.metadata.resourceVersion).sort(),
  );

  // the caller's array is its own: changing it changes nothing cached
  after!.items.length = 0;
  const again = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.equal(again?.items.length, model.objects.size);
});

test("checkpoint cache: a new snapshot (compaction), a head older than the cache (an eventually consistent store) or another key is read whole", async () => {
  const storage = new MapStorage();
  const model = new Model(50);
  await saveModel(storage, model, undefined, "");
  const cache = checkpointCache();
  await loadCheckpoint(storage, "k", IDENTITY, { cache });
  const oldHead = storage.values.get("k")!;

  // a log piece, loaded through the cache
  const first = model.resourceVersion;
  await saveModel(storage, model, model.step(1), first);
  await loadCheckpoint(storage, "k", IDENTITY, { cache });

  // a stale read: the head before that piece (its snapshot is still there)
  const newHead = storage.values.get("k")!;
  storage.values.set("k", oldHead);
  storage.gets.length = 0;
  const stale = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.equal(storage.gets.length, 2, "read whole: " + storage.gets.join());
  assert.equal(stale?.resourceVersion, first);
  storage.values.set("k", newHead);

  // compaction: a new snapshot
  await saveModel(storage, model, undefined, "", { maxLogEntries: 1 });
  await saveModel(storage, model, model.step(60), model.resourceVersion);
  storage.gets.length = 0;
  const compacted = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.ok(storage.gets.some((k) => k.startsWith("k/base/")), storage.gets.join());
  assert.deepEqual(names(compacted?.items), names(model.items));

  // another key: nothing shared
  await saveModel(storage, new Model(5), undefined, "", {}, "other");
  storage.gets.length = 0;
  const other = await loadCheckpoint(storage, "other", IDENTITY, { cache });
  assert.equal(other?.items.length, 5);
  assert.equal(storage.gets.length, 2);
});

test("checkpoint cache: a save remembers what it wrote, so the next load through the cache reads the head only", async () => {
  const storage = new MapStorage();
  const model = new Model(200);
  const cache = checkpointCache();
  await saveModel(storage, model, undefined, "", { cache });
  const since = model.resourceVersion;
  const changes = model.step(4);
  const saved = await saveModel(storage, model, changes, since, { cache });
  assert.equal(saved.written, "log");
  storage.gets.length = 0;
  const loaded = await loadCheckpoint(storage, "k", IDENTITY, { cache });
  assert.deepEqual(storage.gets, ["k"]);
  assert.deepEqual(names(loaded?.items), names(model.items));
});
