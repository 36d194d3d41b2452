import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import {
  type KeyValueNamespaceLike,
  kvCheckpointStorage,
} from "../../src/checkpoint/kv_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { ManualClock } from "../../src/testkit/manual_clock.ts";
import { chunksThen, configMaps, enc, IDENTITY, readAll } from "./_helpers.ts";
import { FakeKv, MAX } from "./_fake_kv.ts";

/** A fake binding whose puts are stamped with the time of `clock`. */
function clocked(clock: ManualClock): FakeKv {
  const kv = new FakeKv();
  kv.clock = clock;
  return kv;
}

/** The times of the puts of `key`. */
const putTimes = (kv: FakeKv, key: string) =>
  kv.putLog.filter((p) => p.key === key).map((p) => p.at);

test("kvCheckpointStorage spaces 5 concurrent puts to one key at least minWriteIntervalMs apart", async () => {
  const clock = new ManualClock(10_000);
  const kv = clocked(clock);
  const storage = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock });
  let settled = 0;
  const puts = [0, 1, 2, 3, 4].map((i) =>
    storage.put("k", chunksThen([enc.encode(`value ${i}`)])).then(() => void settled++)
  );
  await clock.flush();
  assert.deepEqual(putTimes(kv, "k"), [10_000], "the first at once");
  await clock.advance(999);
  assert.deepEqual(putTimes(kv, "k"), [10_000], "the second waits a whole interval");
  for (let i = 0; i < 4; i++) await clock.advance(1000);
  await Promise.all(puts);
  assert.equal(settled, 5);
  assert.deepEqual(putTimes(kv, "k"), [10_000, 11_000, 12_000, 13_000, 14_000]);
  assert.equal(new TextDecoder().decode(await readAll((await storage.get("k"))!)), "value 4");
  // a later put waits only for what is left of the interval
  await clock.advance(1500);
  const late = storage.put("k", chunksThen([enc.encode("late")]));
  await clock.flush();
  assert.equal(putTimes(kv, "k").length, 6, "more than an interval later: at once");
  await late;
});

test("kvCheckpointStorage spaces writes per key and per binding, shared by storages over one binding", async () => {
  const clock = new ManualClock();
  const kv = clocked(clock);
  const a = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock });
  const b = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock, prefix: "" });
  const other = clocked(clock);
  const c = kvCheckpointStorage(other, { maxValueBytes: MAX, clock });
  const pending = [
    a.put("k", chunksThen([enc.encode("a")])),
    b.put("k", chunksThen([enc.encode("b")])), // same binding, same key: waits
    a.put("j", chunksThen([enc.encode("j")])), // another key: at once
    c.put("k", chunksThen([enc.encode("c")])), // another binding: at once
  ];
  await clock.flush();
  assert.deepEqual(kv.putLog.map((p) => `${p.key}@${p.at}`), ["k@0", "j@0"]);
  assert.deepEqual(putTimes(other, "k"), [0]);
  await clock.advance(1000);
  await Promise.all(pending);
  assert.deepEqual(putTimes(kv, "k"), [0, 1000]);
});

test("kvCheckpointStorage: a put waiting for its turn rejects with its abort reason, and the next one goes on", async () => {
  const clock = new ManualClock();
  const kv = clocked(clock);
  const storage = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock });
  await storage.put("k", chunksThen([enc.encode("first")]));
  const ac = new AbortController();
  const aborted = storage.put("k", chunksThen([new Uint8Array(3000)]), { signal: ac.signal });
  const next = storage.put("k", chunksThen([enc.encode("third")]));
  await clock.advance(500);
  ac.abort(new Error("gave up waiting"));
  await assert.rejects(aborted, /gave up waiting/);
  await clock.advance(500);
  await next;
  assert.deepEqual(putTimes(kv, "k"), [0, 1000]);
  assert.deepEqual([...kv.map.keys()], ["k"], "the aborted put's parts are deleted");
  assert.equal(new TextDecoder().decode(await readAll((await storage.get("k"))!)), "third");
});

test("kvCheckpointStorage with minWriteIntervalMs 0 writes at once", async () => {
  const clock = new ManualClock();
  const kv = clocked(clock);
  const storage = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock, minWriteIntervalMs: 0 });
  await Promise.all([1, 2, 3].map((i) => storage.put("k", chunksThen([enc.encode(`${i}`)]))));
  assert.deepEqual(putTimes(kv, "k"), [0, 0, 0]);
  assert.equal(clock.pendingTimers, 0);
});

test("kvCheckpointStorage: 5 concurrent saves of the same state through 5 storages over one binding write the head once", async () => {
  const clock = new ManualClock();
  const kv = clocked(clock);
  const storages = [0, 1, 2, 3, 4].map(() =>
    kvCheckpointStorage(kv, { maxValueBytes: MAX, clock })
  );
  const items = configMaps(10);
  const results = await Promise.all(
    storages.map((storage) =>
      saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "42", items })
    ),
  );
  assert.deepEqual(results.map((r) => r.written).sort(), ["base", "none", "none", "none", "none"]);
  assert.deepEqual(putTimes(kv, "k"), [0], "one write of the head");
  assert.equal(clock.pendingTimers, 0, "nobody waits");
  assert.deepEqual((await loadCheckpoint(storages[3], "k", IDENTITY))?.items, items);
  // changes a moment later: the head is written again one interval after the last time
  const saving = saveCheckpoint(storages[1], "k", {
    identity: IDENTITY,
    resourceVersion: "43",
    items: [items[0], ...items.slice(2)],
    changes: { since: "42", objects: [["default/cm-1", undefined]] },
  }, { maxLogRatio: 100 });
  await clock.advance(999);
  assert.deepEqual(putTimes(kv, "k"), [0]);
  await clock.advance(1);
  assert.equal((await saving).written, "log");
  assert.deepEqual(putTimes(kv, "k"), [0, 1000]);
});

test("kvCheckpointStorage refuses a key whose longest stored key passes maxKeyBytes, before any read or write", async () => {
  const kv = new FakeKv();
  let gets = 0;
  const counting: KeyValueNamespaceLike = {
    get: (k, t) => (gets++, kv.get(k, t)),
    put: (k, v) => kv.put(k, v),
    delete: (k) => kv.delete(k),
  };
  const storage = kvCheckpointStorage(counting, { prefix: "ckpt/", minWriteIntervalMs: 0 });
  // the longest stored key: "ckpt/" + key + "/base/" + 16 + "/parts/" + 16 + "/" + 7 digits
  const fits = "k".repeat(512 - 5 - 22 - 31);
  const tooLong = fits + "é"; // 2 more bytes
  await storage.put(fits, chunksThen([enc.encode("x")]));
  for (
    const call of [
      () => storage.get(tooLong),
      () => storage.put(tooLong, chunksThen([enc.encode("x")])),
      () => storage.delete(tooLong),
    ]
  ) {
    const before = { gets, puts: kv.puts };
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof TypeError, String(err));
      assert.match(err.message, /stored key would be 514 bytes, over maxKeyBytes \(512\)/);
      assert.match(err.message, /keep the key to 454 bytes/);
      return true;
    });
    assert.deepEqual({ gets, puts: kv.puts }, before, "nothing read or written");
  }
  // a checkpoint's own pieces are counted: the key of a piece needs no room for another
  const piece = fits + "/base/0123456789abcdef";
  await storage.put(piece, chunksThen([enc.encode("x")]));
  // through saveCheckpoint and loadCheckpoint: a storage error whose cause is that TypeError
  const puts = kv.puts;
  for (
    const call of [
      () =>
        saveCheckpoint(storage, tooLong, { identity: IDENTITY, resourceVersion: "1", items: [] }),
      () => loadCheckpoint(storage, tooLong, IDENTITY),
    ]
  ) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof CheckpointError && err.reason === "storage", String(err));
      assert.ok(err.cause instanceof TypeError);
      assert.match(err.message, /over maxKeyBytes \(512\)/);
      return true;
    });
  }
  assert.equal(kv.puts, puts, "the save wrote nothing");
  // a store with longer keys
  const roomy = kvCheckpointStorage(kv, { maxKeyBytes: 2048, minWriteIntervalMs: 0 });
  await saveCheckpoint(roomy, tooLong, { identity: IDENTITY, resourceVersion: "1", items: [] });
  assert.equal((await loadCheckpoint(roomy, tooLong, IDENTITY))?.resourceVersion, "1");
});

test("kvCheckpointStorage refuses absurd options with a RangeError or TypeError", () => {
  const kv = new FakeKv();
  for (const minWriteIntervalMs of [-1, NaN, Infinity, 3_600_001, 1e12, "1000" as unknown as number]) {
    assert.throws(() => kvCheckpointStorage(kv, { minWriteIntervalMs }), RangeError);
  }
  for (const maxKeyBytes of [63, 100.5, NaN, Infinity]) {
    assert.throws(() => kvCheckpointStorage(kv, { maxKeyBytes }), RangeError);
  }
  assert.throws(() => kvCheckpointStorage(kv, { clock: {} as never }), TypeError);
  assert.throws(() => kvCheckpointStorage(kv, { clock: null as never }), TypeError);
});

test("kvCheckpointStorage counts the interval from when a write is done, not from when it was sent (a slow write never brings the next one closer)", async () => {
  const clock = new ManualClock(0);
  const kv = clocked(clock);
  // each put takes 300 ms to reach the store and answer
  const put = kv.put.bind(kv);
  kv.put = (key, value) =>
    new Promise<void>((resolve, reject) =>
      clock.setTimeout(() => put(key, value).then(resolve, reject), 300)
    );
  const storage = kvCheckpointStorage(kv, { maxValueBytes: MAX, clock });
  const done: number[] = [];
  const first = storage.put("k", chunksThen([enc.encode("1")])).then(() => done.push(clock.now()));
  const second = storage.put("k", chunksThen([enc.encode("2")])).then(() => done.push(clock.now()));
  for (let i = 0; i < 30; i++) await clock.advance(100);
  await Promise.all([first, second]);
  // stored at 300; the second is sent 1000 ms after that and stored at 1600
  assert.deepEqual(putTimes(kv, "k"), [300, 1600]);
  assert.deepEqual(done, [300, 1600]);
});
