import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import {
  type KeyValueNamespaceLike,
  kvCheckpointStorage,
  type KvCheckpointStorageOptions,
} from "../../src/checkpoint/kv_checkpoint_storage.ts";
import type { Clock } from "../../src/async/clock.ts";
import { FakeKv, MAX } from "./_fake_kv.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import {
  checkpointBytes,
  chunksThen,
  configMaps,
  enc,
  IDENTITY,
  readAll,
  turn,
} from "./_helpers.ts";
import { storageContract } from "./_storage_contract.ts";

/** A storage over `kv` that does not space its writes (unless told to). */
const storageOf = (kv: KeyValueNamespaceLike, options: KvCheckpointStorageOptions = {}) =>
  kvCheckpointStorage(kv, { maxValueBytes: MAX, minWriteIntervalMs: 0, ...options });

/** A clock whose timers fire on the next macrotask, time jumping to them (for the contract). */
function jumpingClock(): Clock {
  let now = 0;
  return {
    now: () => now,
    setTimeout: (fn, ms) => setTimeout(() => (now += ms, fn()), 0),
    clearTimeout: (handle) => clearTimeout(handle as number),
  };
}

storageContract("kvCheckpointStorage", () => {
  const kv = new FakeKv();
  return Promise.resolve({ storage: storageOf(kv), close: () => Promise.resolve() });
});

storageContract("kvCheckpointStorage (default 25 MiB values, writes a second apart)", () => {
  const kv = new FakeKv(25 * 1024 * 1024);
  return Promise.resolve({
    storage: kvCheckpointStorage(kv, { clock: jumpingClock() }),
    close: () => Promise.resolve(),
  });
});

test("kvCheckpointStorage keeps a small value in one key, and splits a big one into parts under the limit", async () => {
  const kv = new FakeKv();
  const storage = storageOf(kv, { prefix: "ckpt/" });
  await storage.put("small", chunksThen([enc.encode("tiny")]));
  assert.deepEqual([...kv.map.keys()], ["ckpt/small"]);
  const big = new Uint8Array(10_000).map((_, i) => i % 251);
  await storage.put("big", chunksThen([big]));
  const keys = [...kv.map.keys()].filter((k) => k.startsWith("ckpt/big"));
  assert.equal(keys.length, 1 + Math.ceil(10_000 / (MAX - 256)));
  assert.ok([...kv.map.values()].every((v) => v.byteLength <= MAX));
  assert.ok(keys.every((k) => k.startsWith("ckpt/")));
  assert.deepEqual(await readAll((await storage.get("big"))!), big);
});

test("kvCheckpointStorage deletes the previous generation's parts once the manifest is replaced", async () => {
  const kv = new FakeKv();
  const storage = storageOf(kv);
  await storage.put("k", chunksThen([new Uint8Array(5000).fill(1)]));
  const first = new Set(kv.map.keys());
  assert.ok(first.size > 2);
  await storage.put("k", chunksThen([new Uint8Array(8000).fill(2)]));
  const second = [...kv.map.keys()];
  assert.deepEqual(second.filter((k) => first.has(k)), ["k"], "only the manifest key is shared");
  await storage.put("k", chunksThen([new Uint8Array(10).fill(3)]));
  assert.deepEqual([...kv.map.keys()], ["k"], "now inline: every part deleted");
  await storage.delete("k");
  assert.equal(kv.map.size, 0);
});

test("kvCheckpointStorage under saveCheckpoint keeps only the head and the pieces it names", async () => {
  const kv = new FakeKv();
  const storage = storageOf(kv);
  const live = () => [...kv.map.keys()].map((k) => k.replace(/[0-9a-f]{16}/g, "G")).sort();
  for (const [rv, count] of [["1", 20], ["2", 30], ["3", 0]] as const) {
    await saveCheckpoint(storage, "k", {
      identity: IDENTITY,
      resourceVersion: rv,
      items: configMaps(count),
    });
    const parts = count === 0 ? 0 : [...kv.map.keys()].filter((k) => k.includes("/parts/")).length;
    assert.deepEqual(
      live(),
      ["k", "k/base/G", ...Array.from({ length: parts }, (_, i) => `k/base/G/parts/G/${i}`)].sort(),
      `after the save at ${rv}`,
    );
  }
  assert.deepEqual((await loadCheckpoint(storage, "k", IDENTITY))?.items, []);
});

test("kvCheckpointStorage keeps the previous checkpoint readable when a save fails between parts", async () => {
  for (const failAt of [1, 2, 5, 11]) {
    const kv = new FakeKv();
    const storage = storageOf(kv);
    await saveCheckpoint(storage, "k", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(10),
    });
    const before = new Set(kv.map.keys());
    kv.failAt = failAt;
    await assert.rejects(
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: configMaps(40),
      }),
      (err) => err instanceof CheckpointError && err.reason === "storage",
      `put ${failAt} failing`,
    );
    const loaded = await loadCheckpoint(storage, "k", IDENTITY);
    assert.equal(loaded?.resourceVersion, "1", `put ${failAt} failing`);
    assert.deepEqual(loaded?.items, configMaps(10));
    assert.deepEqual(new Set(kv.map.keys()), before, "the failed save's parts were removed");
  }
});

test("kvCheckpointStorage keeps the previous checkpoint readable after a crash between parts (no cleanup)", async () => {
  const kv = new FakeKv();
  await saveCheckpoint(storageOf(kv), "k", {
    identity: IDENTITY,
    resourceVersion: "1",
    items: configMaps(10),
  });
  const crashing = kvCheckpointStorage({
    get: (key, type) => kv.get(key, type),
    delete: (key) => kv.delete(key),
    put: async (key, value) => {
      if (kv.puts === 20) {
        kv.dead = true; // the process dies here: nothing after this point happens
        throw new Error("process crashed");
      }
      await kv.put(key, value);
    },
  }, { maxValueBytes: MAX });
  const before = kv.puts;
  await assert.rejects(
    saveCheckpoint(crashing, "k", {
      identity: IDENTITY,
      resourceVersion: "2",
      items: configMaps(40),
    }),
  );
  assert.ok(kv.puts - before > 5, "parts of the new checkpoint were written");
  kv.dead = false; // a new process
  const loaded = await loadCheckpoint(
    storageOf(kv),
    "k",
    IDENTITY,
  );
  assert.equal(loaded?.resourceVersion, "1");
  assert.deepEqual(loaded?.items, configMaps(10));
});

test("kvCheckpointStorage reports a missing part as truncated and a damaged one as corrupt", async () => {
  const setup = async () => {
    const kv = new FakeKv();
    const storage = storageOf(kv);
    await saveCheckpoint(storage, "k", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(10),
    });
    // the parts of the snapshot's value
    const parts = [...kv.map.keys()].filter((k) => k.includes("/parts/")).sort((a, b) =>
      Number(a.split("/").pop()) - Number(b.split("/").pop())
    );
    assert.ok(parts.length > 5);
    return { kv, storage, parts };
  };
  const reasonOf = async (storage: ReturnType<typeof kvCheckpointStorage>) => {
    try {
      await loadCheckpoint(storage, "k", IDENTITY);
    } catch (err) {
      assert.ok(err instanceof CheckpointError, String(err));
      return err.reason;
    }
    return "loaded";
  };
  {
    const { kv, storage, parts } = await setup();
    kv.map.delete(parts[3]);
    assert.equal(await reasonOf(storage), "truncated");
  }
  {
    const { kv, storage, parts } = await setup();
    kv.map.delete(parts[parts.length - 1]);
    assert.equal(await reasonOf(storage), "truncated");
  }
  {
    const { kv, storage, parts } = await setup();
    kv.map.set(parts[2], kv.map.get(parts[2])!.slice(0, 100));
    assert.equal(await reasonOf(storage), "truncated");
  }
  {
    const { kv, storage, parts } = await setup();
    const part = kv.map.get(parts[4])!;
    part[50] ^= 0x01; // same size, one bit changed
    assert.equal(await reasonOf(storage), "corrupt");
  }
  {
    const { kv, storage, parts } = await setup();
    const swapped = kv.map.get(parts[1])!;
    kv.map.set(parts[1], kv.map.get(parts[2])!);
    kv.map.set(parts[2], swapped);
    assert.equal(await reasonOf(storage), "corrupt");
  }
  {
    const { kv, storage } = await setup();
    kv.map.set("k", enc.encode("<html>not a manifest</html>\n"));
    assert.equal(await reasonOf(storage), "corrupt");
    kv.map.set(
      "k",
      enc.encode(JSON.stringify({ format: "kube-reflector-split-value", version: 7 }) + "\n"),
    );
    assert.equal(await reasonOf(storage), "newer-format");
  }
});

test("kvCheckpointStorage refuses a value limit below 1024 bytes and a non-binding", () => {
  assert.throws(() => kvCheckpointStorage(new FakeKv(), { maxValueBytes: 1000 }), RangeError);
  assert.throws(() => kvCheckpointStorage(null as unknown as KeyValueNamespaceLike), TypeError);
});

/** Cloudflare's `KVNamespace` as @cloudflare/workers-types declares it (abridged to the overloads). */
interface CloudflareKvNamespace {
  get(key: string, options?: { cacheTtl?: number }): Promise<string | null>;
  get(key: string, type: "text"): Promise<string | null>;
  get<T = unknown>(key: string, type: "json"): Promise<T | null>;
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  get(key: string, type: "stream"): Promise<ReadableStream | null>;
  put(
    key: string,
    value: string | ArrayBuffer | ArrayBufferView | ReadableStream,
    options?: { expiration?: number; expirationTtl?: number; metadata?: unknown },
  ): Promise<void>;
  delete(key: string): Promise<void>;
}

test("a Workers KV binding is a KeyValueNamespaceLike (checked by the type checker)", () => {
  const fits = (binding: CloudflareKvNamespace): KeyValueNamespaceLike => binding;
  assert.equal(typeof fits, "function");
});

test("kvCheckpointStorage rejects get, a read of parts, put and delete with the abort reason while the binding never answers", async () => {
  const items = configMaps(20);
  const cases: Record<
    string,
    (storage: CheckpointStorage, signal: AbortSignal) => Promise<unknown>
  > = {
    get: (storage, signal) => storage.get("k", { signal }),
    put: (storage, signal) => storage.put("k", chunksThen([new Uint8Array(5000)]), { signal }),
    delete: (storage, signal) => storage.delete("k", { signal }),
  };
  const big = await checkpointBytes(items);
  for (const [name, call] of Object.entries(cases)) {
    const kv = new FakeKv();
    const storage = storageOf(kv);
    await storage.put("k", chunksThen([big])); // a value in parts
    kv.hang = true;
    const ac = new AbortController();
    const pending = call(storage, ac.signal);
    await turn();
    ac.abort(new Error(`gave up on ${name}`));
    await assert.rejects(pending, new RegExp(`gave up on ${name}`));
  }
  // a value whose manifest was read, then the parts never come
  const kv = new FakeKv();
  const storage = storageOf(kv);
  await storage.put("k", chunksThen([big]));
  assert.ok(kv.map.size > 2, "a value in parts");
  const ac = new AbortController();
  const value = (await storage.get("k", { signal: ac.signal }))!;
  kv.hang = true;
  const reading = value[Symbol.asyncIterator]().next();
  await turn();
  ac.abort(new Error("gave up on a part"));
  await assert.rejects(reading, /gave up on a part/);
});
