/**
 * What every CheckpointStorage must do, as tests registered for one
 * implementation: missing keys, replacing, all-or-nothing puts (a put whose
 * data throws or is aborted keeps the previous value), deleting,
 * independent keys, and a real checkpoint round trip.
 *
 * @module
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import {
  chunksThen,
  configMaps,
  enc,
  IDENTITY,
  readAll,
  stallingValue,
  until,
} from "./_helpers.ts";

/** A storage under test, and how to dispose of it. */
export interface StorageFixture {
  storage: CheckpointStorage;
  close(): Promise<void>;
}

async function value(storage: CheckpointStorage, key: string): Promise<string | undefined> {
  const data = await storage.get(key);
  return data && new TextDecoder().decode(await readAll(data));
}

/** Bytes of `size`, not all alike. */
function bytesOf(size: number, seed = 0): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = 0x61 + ((i * 31 + seed) % 26);
  return out;
}

/** Registers the contract tests for one storage (`skip` says why they cannot run here). */
export function storageContract(
  name: string,
  open: () => Promise<StorageFixture>,
  skip?: string,
): void {
  const run = (what: string, fn: (storage: CheckpointStorage) => Promise<void>) => {
    test(`${name} ${what}`, async () => {
      if (skip) {
        console.log(`skipped: ${skip}`);
        return;
      }
      const fixture = await open();
      try {
        await fn(fixture.storage);
      } finally {
        await fixture.close();
      }
    });
  };

  run("resolves undefined for a missing key, and deleting it is no error", async (storage) => {
    assert.equal(await storage.get("missing"), undefined);
    await storage.delete("missing");
  });

  run("returns what was put, whatever the chunking and size", async (storage) => {
    for (const size of [0, 1, 1000, 5000, 70_000, 300_000]) {
      const bytes = bytesOf(size, size);
      const chunks = [
        bytes.slice(0, size / 3),
        bytes.slice(size / 3, size / 2),
        bytes.slice(size / 2),
      ];
      await storage.put(`v${size}`, chunksThen(chunks));
      const got = await storage.get(`v${size}`);
      assert.ok(got, `size ${size}`);
      assert.deepEqual(await readAll(got), bytes, `size ${size}`);
    }
  });

  run("replaces a value, bigger or smaller", async (storage) => {
    await storage.put("k", chunksThen([enc.encode("first")]));
    await storage.put("k", chunksThen([bytesOf(200_000)]));
    assert.equal((await readAll((await storage.get("k"))!)).byteLength, 200_000);
    await storage.put("k", chunksThen([enc.encode("third")]));
    assert.equal(await value(storage, "k"), "third");
  });

  run("keeps the previous value when the data of a put throws midway", async (storage) => {
    await storage.put("k", chunksThen([bytesOf(100_000, 1)]));
    const failure = new Error("producer crashed");
    await assert.rejects(
      storage.put("k", chunksThen([bytesOf(70_000, 2), bytesOf(70_000, 3)], failure)),
      (err) => err === failure,
    );
    assert.deepEqual(await readAll((await storage.get("k"))!), bytesOf(100_000, 1));
    await assert.rejects(storage.put("new", chunksThen([bytesOf(10)], failure)));
    assert.equal(await storage.get("new"), undefined);
  });

  run(
    "keeps the previous value when a put is aborted midway, rejecting with the reason",
    async (storage) => {
      await storage.put("k", chunksThen([enc.encode("old")]));
      const ac = new AbortController();
      const data = (async function* () {
        yield bytesOf(70_000);
        ac.abort(new Error("aborted put"));
        yield bytesOf(70_000);
      })();
      await assert.rejects(storage.put("k", data, { signal: ac.signal }), /aborted put/);
      assert.equal(await value(storage, "k"), "old");
    },
  );

  run(
    "rejects a put with the abort reason while its data never yields, and keeps the previous value",
    async (storage) => {
      await storage.put("k", chunksThen([enc.encode("old")]));
      const ac = new AbortController();
      const data = stallingValue([bytesOf(70_000)]);
      const pending = storage.put("k", data, { signal: ac.signal });
      await until(() => data.log.length === 2, "the put waits for its second chunk");
      ac.abort(new Error("gave up on the data"));
      await assert.rejects(pending, /gave up on the data/);
      assert.equal(await value(storage, "k"), "old");
      assert.equal(data.log.at(-1), "return", "the data is released");
    },
  );

  run("rejects every method at once with the reason of an aborted signal", async (storage) => {
    await storage.put("k", chunksThen([enc.encode("old")]));
    const ac = new AbortController();
    ac.abort(new Error("aborted before"));
    const signal = ac.signal;
    await assert.rejects(storage.get("k", { signal }), /aborted before/);
    await assert.rejects(
      storage.put("k", chunksThen([enc.encode("new")]), { signal }),
      /aborted before/,
    );
    await assert.rejects(storage.delete("k", { signal }), /aborted before/);
    assert.equal(await value(storage, "k"), "old");
  });

  run("deletes a value", async (storage) => {
    await storage.put("k", chunksThen([bytesOf(150_000)]));
    await storage.delete("k");
    assert.equal(await storage.get("k"), undefined);
  });

  run("keeps keys apart, odd characters included", async (storage) => {
    const keys = [
      "a",
      "A-b_c.d",
      "a/b",
      "a/b/c",
      "..",
      ".",
      "../x",
      "a b",
      "ünïcødé ✓",
      "a%2Fb",
      "x:y",
    ];
    for (const [i, key] of keys.entries()) {
      await storage.put(key, chunksThen([enc.encode(`value ${i}`)]));
    }
    for (const [i, key] of keys.entries()) {
      assert.equal(await value(storage, key), `value ${i}`, key);
    }
  });

  run("round-trips a checkpoint through saveCheckpoint and loadCheckpoint", async (storage) => {
    const items = configMaps(300, 1000);
    const saved = await saveCheckpoint(storage, "configmaps", {
      identity: IDENTITY,
      resourceVersion: "99",
      items,
    });
    const loaded = await loadCheckpoint(storage, "configmaps", IDENTITY);
    assert.deepEqual(loaded?.items, items);
    assert.equal(loaded?.bytes, saved.bytes);
    const again = await saveCheckpoint(storage, "configmaps", {
      identity: IDENTITY,
      resourceVersion: "100",
      items: items.slice(0, 2),
    });
    const reloaded = await loadCheckpoint(storage, "configmaps", IDENTITY);
    assert.equal(reloaded?.resourceVersion, "100");
    assert.equal(reloaded?.bytes, again.bytes);
  });
}
