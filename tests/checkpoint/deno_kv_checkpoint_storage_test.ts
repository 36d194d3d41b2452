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
import { chunksThen, configMaps, IDENTITY, never, turn } from "./_helpers.ts";
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
  "denoKvCheckpointStorage stores a small checkpoint in one key and splits a big one under 64 KiB",
  async (kv) => {
    const storage = denoKvCheckpointStorage(kv, { prefix: ["app", "ckpt"] });
    await saveCheckpoint(storage, "small", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(2),
    });
    assert.deepEqual(await keys(kv), ["app/ckpt/small"]);
    const items = configMaps(400, 1000); // about 500 KB
    await saveCheckpoint(storage, "big", { identity: IDENTITY, resourceVersion: "2", items });
    const bigKeys = (await keys(kv)).filter((k) => k.startsWith("app/ckpt/big"));
    assert.ok(bigKeys.length > 8, `${bigKeys.length} keys`);
    assert.deepEqual((await loadCheckpoint(storage, "big", IDENTITY))?.items, items);
    // replacing deletes the previous generation's parts
    await saveCheckpoint(storage, "big", {
      identity: IDENTITY,
      resourceVersion: "3",
      items: items.slice(0, 300),
    });
    const after = (await keys(kv)).filter((k) => k.startsWith("app/ckpt/big"));
    assert.equal(new Set(after.filter((k) => bigKeys.includes(k) && k !== "app/ckpt/big")).size, 0);
    await storage.delete("big");
    assert.deepEqual(await keys(kv), ["app/ckpt/small"]);
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
    const save = () =>
      saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items });
    const partKeys = async () => {
      const out: DenoKvKeyLike[] = [];
      for await (const entry of kv.list({ prefix: ["c", "k"] })) out.push(entry.key);
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
    assert.ok(["1", "2", "3"].includes(loaded!.resourceVersion));
    const generations = new Set(
      (await keys(kv)).filter((k) => k !== "c/k").map((k) => k.split("/")[2]),
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
    for (const [name, call] of Object.entries(calls)) {
      const store = hanging(kv);
      const storage = denoKvCheckpointStorage(store);
      await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items });
      store.hang();
      const ac = new AbortController();
      const pending = call(storage, ac.signal);
      await turn();
      ac.abort(new Error(`gave up on ${name}`));
      await assert.rejects(pending, new RegExp(`gave up on ${name}`));
    }
    const store = hanging(kv);
    const storage = denoKvCheckpointStorage(store);
    await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items });
    const ac = new AbortController();
    const value = (await storage.get("k", { signal: ac.signal }))!;
    store.hang();
    const reading = value[Symbol.asyncIterator]().next();
    await turn();
    ac.abort(new Error("gave up on a part"));
    await assert.rejects(reading, /gave up on a part/);
  },
);
