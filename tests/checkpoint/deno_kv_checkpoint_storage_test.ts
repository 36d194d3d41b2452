import assert from "node:assert/strict";
import { runtime, test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import {
  type DenoKvAtomicLike,
  denoKvCheckpointStorage,
  type DenoKvKeyLike,
  type DenoKvLike,
} from "../../src/checkpoint/deno_kv_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import {
  checkpointBytes,
  chunksThen,
  configMaps,
  IDENTITY,
  never,
  readAll,
  turn,
} from "./_helpers.ts";
import { storageContract } from "./_storage_contract.ts";

interface OpenKv extends DenoKvLike {
  list(selector: { prefix: DenoKvKeyLike }): AsyncIterable<{ key: DenoKvKeyLike }>;
  delete(key: DenoKvKeyLike): Promise<void>;
  close(): void;
}
// deno-lint-ignore no-explicit-any
const openKv: ((path: string) => Promise<OpenKv>) | undefined = (globalThis as any).Deno?.openKv;
const skip = runtime !== "deno"
  ? "Deno KV exists only on Deno"
  : openKv === undefined
  ? "Deno.openKv is unavailable: run deno test with --unstable-kv"
  : undefined;

const kvTest = (name: string, fn: (kv: OpenKv) => Promise<void>) =>
  test(name, async () => {
    if (skip) {
      console.log(`skipped: ${skip}`);
      return;
    }
    const kv = await openKv!(":memory:");
    try {
      await fn(kv);
    } finally {
      kv.close();
    }
  });

async function keys(kv: OpenKv): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of kv.list({ prefix: [] })) out.push(entry.key.join("/"));
  return out;
}

storageContract("denoKvCheckpointStorage", async () => {
  const kv = await openKv!(":memory:");
  return { storage: denoKvCheckpointStorage(kv), close: () => Promise.resolve(kv.close()) };
}, skip);

kvTest(
  "denoKvCheckpointStorage stores a small value in one key and splits a big one under 64 KiB",
  async (kv) => {
    const storage = denoKvCheckpointStorage(kv, { prefix: ["app", "ckpt"] });
    await storage.put("small", chunksThen([new Uint8Array(1000).fill(1)]));
    assert.deepEqual(await keys(kv), ["app/ckpt/small"]);
    const big = new Uint8Array(500_000).map((_, i) => i % 251);
    await storage.put("big", chunksThen([big]));
    const bigKeys = (await keys(kv)).filter((k) => k.startsWith("app/ckpt/big"));
    assert.ok(bigKeys.length > 8, `${bigKeys.length} keys`);
    assert.deepEqual(await readAll((await storage.get("big"))!), big);
    // replacing deletes the previous generation's parts
    await storage.put("big", chunksThen([big.slice(0, 300_000)]));
    const after = (await keys(kv)).filter((k) => k.startsWith("app/ckpt/big"));
    assert.equal(new Set(after.filter((k) => bigKeys.includes(k) && k !== "app/ckpt/big")).size, 0);
    await storage.delete("big");
    assert.deepEqual(await keys(kv), ["app/ckpt/small"]);
  },
);

kvTest(
  "denoKvCheckpointStorage under saveCheckpoint keeps only the head and the pieces it names",
  async (kv) => {
    const storage = denoKvCheckpointStorage(kv, { prefix: ["app", "ckpt"] });
    const shape = async () => [
      ...new Set(
        (await keys(kv)).map((k) => k.replace(/[0-9a-f]{16}/g, "G").replace(/\/\d+$/, "/N")),
      ),
    ];
    await saveCheckpoint(storage, "small", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(2),
    });
    assert.deepEqual(await shape(), ["app/ckpt/small", "app/ckpt/small/base/G"]);
    const items = configMaps(400, 1000); // about 500 KB
    await saveCheckpoint(storage, "big", { identity: IDENTITY, resourceVersion: "2", items });
    await saveCheckpoint(storage, "big", {
      identity: IDENTITY,
      resourceVersion: "3",
      items: items.slice(0, 300),
    });
    assert.deepEqual((await shape()).filter((k) => k.startsWith("app/ckpt/big")), [
      "app/ckpt/big",
      "app/ckpt/big/base/G",
      "app/ckpt/big/base/G/G/N",
    ]);
    const generations = new Set(
      (await keys(kv)).filter((k) => k.startsWith("app/ckpt/big/base/")).map((k) =>
        k.split("/")[4]
      ),
    );
    assert.equal(generations.size, 1, "the first snapshot and its parts are deleted");
    assert.deepEqual((await loadCheckpoint(storage, "big", IDENTITY))?.items, items.slice(0, 300));
  },
);

kvTest(
  "denoKvCheckpointStorage keeps the previous checkpoint readable when a save crashes between parts",
  async (kv) => {
    await saveCheckpoint(denoKvCheckpointStorage(kv), "k", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(200, 1000),
    });
    let commits = 0;
    let dead = false;
    const crashing: DenoKvLike = {
      get: (key) => {
        if (dead) throw new Error("process crashed");
        return kv.get(key);
      },
      atomic: () => {
        const op = kv.atomic();
        const wrapped: DenoKvAtomicLike = {
          check: (...checks) => (op.check(...checks), wrapped),
          set: (key, value) => (op.set(key, value), wrapped),
          delete: (key) => (op.delete(key), wrapped),
          commit: () => {
            if (dead || ++commits === 2) {
              dead = true;
              return Promise.reject(new Error("process crashed"));
            }
            return op.commit();
          },
        };
        return wrapped;
      },
    };
    await assert.rejects(
      saveCheckpoint(denoKvCheckpointStorage(crashing), "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: configMaps(400, 1000),
      }),
      (err) => err instanceof CheckpointError && err.reason === "storage",
    );
    const loaded = await loadCheckpoint(denoKvCheckpointStorage(kv), "k", IDENTITY);
    assert.equal(loaded?.resourceVersion, "1");
    assert.deepEqual(loaded?.items, configMaps(200, 1000));
  },
);

kvTest(
  "denoKvCheckpointStorage reports a missing part as truncated and a damaged one as corrupt",
  async (kv) => {
    const storage = denoKvCheckpointStorage(kv, { prefix: ["c"] });
    const items = configMaps(200, 1000);
    // each save at a newer version: a save at the stored version writes nothing
    let rv = 0;
    const save = () =>
      saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: String(++rv), items });
    // the parts of the snapshot's value: ["c", "k/base/…", generation, index]
    const partKeys = async () => {
      const out: DenoKvKeyLike[] = [];
      for await (const entry of kv.list({ prefix: ["c"] })) {
        if (entry.key.length === 4) out.push(entry.key);
      }
      assert.ok(out.length > 2);
      return out;
    };
    await save();
    await kv.delete((await partKeys())[2]);
    await assert.rejects(
      loadCheckpoint(storage, "k", IDENTITY),
      (err) => err instanceof CheckpointError && err.reason === "truncated",
    );
    await save();
    const key = (await partKeys())[1];
    const part = (await kv.get(key)).value as Uint8Array;
    part[10] ^= 0x04;
    await kv.atomic().set(key, part).commit();
    await assert.rejects(
      loadCheckpoint(storage, "k", IDENTITY),
      (err) => err instanceof CheckpointError && err.reason === "corrupt",
    );
    await kv.atomic().set(["c", "k"], { not: "a manifest" }).commit();
    await assert.rejects(
      loadCheckpoint(storage, "k", IDENTITY),
      (err) => err instanceof CheckpointError && err.reason === "corrupt",
    );
  },
);

kvTest(
  "denoKvCheckpointStorage: concurrent saves leave one whole checkpoint and no stray parts",
  async (kv) => {
    const storage = denoKvCheckpointStorage(kv, { prefix: ["c"] });
    await Promise.all(["1", "2", "3"].map((rv) =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: rv,
        items: configMaps(150, 1000),
      })
    ));
    const loaded = await loadCheckpoint(storage, "k", IDENTITY);
    assert.equal(loaded?.resourceVersion, "3", "the saves took turns: the last one is stored");
    const stored = (await keys(kv)).filter((k) => k !== "c/k");
    const pieces = new Set(stored.map((k) => k.split("/").slice(0, 4).join("/")));
    assert.equal(pieces.size, 1, [...pieces].join(", "));
    const generations = new Set(
      stored.filter((k) => k.split("/").length === 6).map((k) => k.split("/")[4]),
    );
    assert.equal(generations.size, 1, [...generations].join(", "));
  },
);

/** `kv`, but every get and commit never answers once `hang()` is called. */
function hanging(kv: DenoKvLike): DenoKvLike & { hang(): void } {
  let hung = false;
  return {
    hang: () => void (hung = true),
    get: (key) => hung ? never() : kv.get(key),
    atomic: () => {
      const op = kv.atomic();
      const wrapped: DenoKvAtomicLike = {
        check: (...checks) => (op.check(...checks), wrapped),
        set: (key, value) => (op.set(key, value), wrapped),
        delete: (key) => (op.delete(key), wrapped),
        commit: () => hung ? never() : op.commit(),
      };
      return wrapped;
    },
  };
}

kvTest(
  "denoKvCheckpointStorage rejects get, a read of parts, put and delete with the abort reason while Deno KV never answers",
  async (kv) => {
    const items = configMaps(200, 1000); // parts
    const calls = {
      get: (s: ReturnType<typeof denoKvCheckpointStorage>, signal: AbortSignal) =>
        s.get("k", { signal }),
      put: (s: ReturnType<typeof denoKvCheckpointStorage>, signal: AbortSignal) =>
        s.put("k", chunksThen([new Uint8Array(200_000)]), { signal }),
      delete: (s: ReturnType<typeof denoKvCheckpointStorage>, signal: AbortSignal) =>
        s.delete("k", { signal }),
    };
    const big = await checkpointBytes(items);
    for (const [name, call] of Object.entries(calls)) {
      const store = hanging(kv);
      const storage = denoKvCheckpointStorage(store);
      await storage.put("k", chunksThen([big])); // a value in parts
      store.hang();
      const ac = new AbortController();
      const pending = call(storage, ac.signal);
      await turn();
      ac.abort(new Error(`gave up on ${name}`));
      await assert.rejects(pending, new RegExp(`gave up on ${name}`));
    }
    const store = hanging(kv);
    const storage = denoKvCheckpointStorage(store);
    await storage.put("k", chunksThen([big]));
    const ac = new AbortController();
    const value = (await storage.get("k", { signal: ac.signal }))!;
    store.hang();
    const reading = value[Symbol.asyncIterator]().next();
    await turn();
    ac.abort(new Error("gave up on a part"));
    await assert.rejects(reading, /gave up on a part/);
  },
);

kvTest(
  "denoKvCheckpointStorage: saves through two storages over one Deno.Kv take turns",
  async (kv) => {
    const items = configMaps(20);
    const save = (storage: ReturnType<typeof denoKvCheckpointStorage>) =>
      saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "7", items });
    const results = await Promise.all([
      save(denoKvCheckpointStorage(kv)),
      save(denoKvCheckpointStorage(kv)),
    ]);
    assert.deepEqual(results.map((r) => r.written).sort(), ["base", "none"]);
  },
);
