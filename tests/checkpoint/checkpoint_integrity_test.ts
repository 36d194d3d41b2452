import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { IDENTITY, turn } from "./_helpers.ts";
import { MapStorage, namedPieces, storedHead } from "./_map_storage.ts";
import { Model, saveModel } from "./_model.ts";

const isReason = (...reasons: string[]) => (err: unknown) =>
  err instanceof CheckpointError && reasons.includes(err.reason);

/** A checkpoint under "k": a snapshot of 30 objects at 1000, then two log pieces. */
async function withLog(storage = new MapStorage()): Promise<{ storage: MapStorage; model: Model }> {
  const model = new Model(30);
  await saveModel(storage, model, undefined, "");
  for (let i = 0; i < 2; i++) {
    const since = model.resourceVersion;
    const saved = await saveModel(storage, model, model.step(2), since, { maxLogRatio: 100 });
    assert.equal(saved.written, "log");
  }
  return { storage, model };
}

test("a checkpoint whose snapshot or log piece is missing is truncated, never loaded in part", async () => {
  for (const which of [0, 1, 2]) {
    const { storage } = await withLog();
    const pieces = namedPieces(storage.values, "k"); // sorted: base, then the logs
    const missing = [
      pieces.find((p) => p.includes("/base/"))!,
      ...pieces.filter((p) => p.includes("/log/")),
    ][which];
    storage.values.delete(missing);
    await assert.rejects(loadCheckpoint(storage, "k", IDENTITY), isReason("truncated"), missing);
  }
});

test("a log piece of another save under the name a head gives is corrupt", async () => {
  // two checkpoints made alike (same objects, same changes): only their generations differ
  const a = await withLog();
  const b = await withLog();
  const logOf = (s: MapStorage) => storedHead(s.values, "k").log.map((e) => `k/log/${e.gen}`);
  const [aLog, bLog] = [logOf(a.storage), logOf(b.storage)];
  assert.equal(a.storage.values.get(aLog[1])!.length, b.storage.values.get(bLog[1])!.length);
  a.storage.values.set(aLog[1], b.storage.values.get(bLog[1])!);
  await assert.rejects(loadCheckpoint(a.storage, "k", IDENTITY), (err) => {
    assert.ok(isReason("corrupt")(err), String(err));
    assert.match((err as Error).message, /another save/);
    return true;
  });
  // two log pieces of one head swapped
  const c = await withLog();
  const cLog = logOf(c.storage);
  const first = c.storage.values.get(cLog[0])!;
  c.storage.values.set(cLog[0], c.storage.values.get(cLog[1])!);
  c.storage.values.set(cLog[1], first);
  await assert.rejects(loadCheckpoint(c.storage, "k", IDENTITY), isReason("corrupt"));
});

/** A save of the next step that fails where `fail` says; the previous checkpoint must stay. */
async function failingSave(
  fail: (storage: MapStorage) => void,
  changes: number | undefined,
): Promise<void> {
  const { storage, model } = await withLog();
  const head = storage.values.get("k");
  const before = await loadCheckpoint(storage, "k", IDENTITY);
  const since = model.resourceVersion;
  const next = model.clone();
  const step = changes === undefined ? undefined : next.step(changes);
  fail(storage);
  await assert.rejects(
    saveModel(storage, next, step, since, { maxLogRatio: 100 }),
    (err) => isReason("storage")(err) && /disk full/.test((err as Error).message),
  );
  storage.onChunk = undefined;
  assert.equal(storage.values.get("k"), head, "the head is as it was");
  const after = await loadCheckpoint(storage, "k", IDENTITY);
  assert.deepEqual(after?.items, before?.items);
  assert.equal(after?.resourceVersion, model.resourceVersion);
}

test("a storage that fails mid-write leaves the previous checkpoint loadable and unchanged", async () => {
  const full = () => {
    throw new Error("disk full");
  };
  // the log piece's put fails
  await failingSave((s) => (s.onChunk = (key) => key.includes("/log/") ? full() : undefined), 3);
  // the log piece is written, the head's put fails
  await failingSave((s) => (s.onChunk = (key) => key === "k" ? full() : undefined), 3);
  // a new snapshot (no changes given) fails at its 3rd chunk of 64 KiB
  const storage = new MapStorage();
  const model = new Model(1000, 1000, 1000);
  await saveModel(storage, model, undefined, "");
  const head = storage.values.get("k");
  const chunks: number[] = [];
  storage.onChunk = (key, index) => {
    if (key.includes("/base/")) chunks.push(index);
    if (key.includes("/base/") && index === 2) full();
  };
  const next = model.clone();
  next.step(5);
  await assert.rejects(saveModel(storage, next, undefined, ""), isReason("storage"));
  assert.deepEqual(chunks, [0, 1, 2]);
  assert.equal(storage.values.get("k"), head, "the head is as it was");
  assert.deepEqual((await loadCheckpoint(storage, "k", IDENTITY))?.items, model.items);
});

test("saves of one key through one storage take turns: each starts from the head the one before wrote", async () => {
  const storage = new MapStorage();
  const model = new Model(50);
  await saveModel(storage, model, undefined, "");
  const versions: { model: Model; since: string; changes: ReturnType<Model["step"]> }[] = [];
  for (let i = 0; i < 10; i++) {
    const since = model.resourceVersion;
    const changes = model.step(2);
    versions.push({ model: model.clone(), since, changes });
  }
  const options = { maxLogRatio: 100, maxLogEntries: 100 };
  // started together, in order: each appends to the head the one before wrote
  const written = await Promise.all(
    versions.map((v) => saveModel(storage, v.model, v.changes, v.since, options)),
  );
  assert.deepEqual(written.map((w) => w.written), Array(10).fill("log"));
  assert.equal(storedHead(storage.values, "k").log.length, 10);
  const loaded = await loadCheckpoint(storage, "k", IDENTITY);
  assert.equal(loaded?.resourceVersion, model.resourceVersion);
  assert.deepEqual(loaded?.items, model.items);
  // started together, newest first: the older ones find a newer head and write nothing
  const later = new Model(50, 2000);
  const again = await Promise.all(
    [later, new Model(40, 1990), new Model(30, 1980)].map((m) =>
      saveModel(storage, m, undefined, "", options)
    ),
  );
  assert.deepEqual(again.map((w) => w.written), ["base", "none", "none"]);
  assert.deepEqual((await loadCheckpoint(storage, "k", IDENTITY))?.items, later.items);
});

/** A pseudo-random sequence from a seed (the same runs every time). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test("two processes saving one key without a shared lock leave one whole state, never a mix", async () => {
  const outcomes = new Set<string>();
  for (let round = 0; round < 40; round++) {
    const values = new Map<string, Uint8Array>();
    const a = new MapStorage(values); // two storages over one store: two processes
    const b = new MapStorage(values);
    const base = new Model(20);
    await saveModel(a, base, undefined, "");
    const rand = random(round + 1);
    for (const s of [a, b]) {
      s.beforeStore = async () => {
        for (let i = Math.floor(rand() * 4); i > 0; i--) await turn();
      };
    }
    // a appends its changes; b appends others, or writes a snapshot (compaction)
    const ma = base.clone();
    const ca = ma.step(3);
    const mb = base.clone(); // another history from the same version, two steps on
    const cb = [...new Map([...mb.step(1), ...mb.step(2)])];
    const whole = new Map([base, ma, mb].map((m) => [m.resourceVersion, m]));
    const options = { maxLogRatio: 100 };
    await Promise.allSettled([
      saveModel(a, ma, ca, base.resourceVersion, options),
      round % 2
        ? saveModel(b, mb, cb, base.resourceVersion, options)
        : saveModel(b, mb, undefined, "", options),
    ]);
    try {
      const loaded = await loadCheckpoint(a, "k", IDENTITY);
      const expected = whole.get(loaded!.resourceVersion);
      assert.ok(expected, `round ${round}: version ${loaded!.resourceVersion}`);
      assert.deepEqual(loaded!.items, expected.items, `round ${round}`);
      outcomes.add(`state ${loaded!.resourceVersion}`);
    } catch (err) {
      // a head naming a piece the other process deleted: refused, never half-loaded
      assert.ok(isReason("truncated")(err), `round ${round}: ${err}`);
      outcomes.add("truncated");
    }
  }
  assert.ok(outcomes.size >= 2, [...outcomes].join(", "));
});

test("a save waiting for the one before rejects with its abort reason, writes nothing, and the lock goes on", async () => {
  const storage = new MapStorage();
  const model = new Model(10);
  await saveModel(storage, model, undefined, "");
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  storage.beforeStore = (key) => key === "k" ? held : undefined;
  const first = model.clone();
  const puts = storage.puts.length;
  const firstSave = saveModel(storage, first, first.step(1), model.resourceVersion);
  const ac = new AbortController();
  const second = first.clone();
  const waiting = saveModel(storage, second, second.step(1), first.resourceVersion, {
    signal: ac.signal,
  });
  await turn();
  ac.abort(new Error("waited too long"));
  await assert.rejects(waiting, /waited too long/);
  release();
  await firstSave;
  storage.beforeStore = undefined;
  await turn();
  assert.equal(storedHead(storage.values, "k").resourceVersion, first.resourceVersion);
  assert.deepEqual(
    storage.puts.slice(puts).map((p) => p.key.replace(/[0-9a-f]{16}$/, "G")),
    ["k/log/G", "k"],
    "the first save's log piece and head, nothing of the aborted one",
  );
  // the next save is not held by the aborted one
  const third = first.clone();
  const saved = await saveModel(storage, third, third.step(1), first.resourceVersion);
  assert.equal(saved.resourceVersion, third.resourceVersion);
  assert.deepEqual((await loadCheckpoint(storage, "k", IDENTITY))?.items, third.items);
  // an abort before the save starts: rejected at once
  await assert.rejects(
    saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items: [] }, {
      signal: AbortSignal.abort(new Error("too late")),
    }),
    /too late/,
  );
});
