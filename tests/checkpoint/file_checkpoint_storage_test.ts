import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { fileCheckpointStorage } from "../../src/checkpoint/file_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { chunksThen, configMaps, enc, IDENTITY, readAll } from "./_helpers.ts";
import { storageContract } from "./_storage_contract.ts";

async function tempDir(): Promise<{ dir: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-ckpt-"));
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
}

storageContract("fileCheckpointStorage", async () => {
  const { dir, close } = await tempDir();
  return { storage: fileCheckpointStorage(join(dir, "nested", "dir")), close };
});

test("fileCheckpointStorage names files after keys so that no key reaches outside its directory", async () => {
  const { dir, close } = await tempDir();
  try {
    const inner = join(dir, "inner");
    const storage = fileCheckpointStorage(inner);
    const keys = ["../escape", "..", ".", ".hidden", "a/b", "a\\b", "/etc/passwd", "pods", "x.y*"];
    for (const key of keys) await storage.put(key, chunksThen([enc.encode(key)]));
    assert.deepEqual(await readdir(dir), ["inner"]);
    assert.deepEqual(
      (await readdir(inner)).sort(),
      [
        "%2E",
        "%2E%2E",
        "%2E%2E%2Fescape",
        "%2Ehidden",
        "%2Fetc%2Fpasswd",
        "a%2Fb",
        "a%5Cb",
        "pods",
        "x%2Ey%2A",
      ].map((n) => `${n}.checkpoint`).sort(),
    );
    for (const key of keys) {
      assert.equal(new TextDecoder().decode(await readAll((await storage.get(key))!)), key);
    }
    await assert.rejects(storage.put("", chunksThen([])), TypeError);
    await assert.rejects(storage.get("x".repeat(300)), RangeError);
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: a save whose data throws midway leaves the old file readable and no temporary file", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(100),
    });
    const before = await readFile(join(dir, "cms.checkpoint"));
    const failure = new Error("crashed between two chunks");
    await assert.rejects(
      storage.put(
        "cms",
        chunksThen(
          [enc.encode('{"format":"kube-reflector-checkpoint"\n'), new Uint8Array(100_000)],
          failure,
        ),
      ),
      (err) => err === failure,
    );
    assert.deepEqual(await readdir(dir), ["cms.checkpoint"]);
    assert.deepEqual(await readFile(join(dir, "cms.checkpoint")), before);
    const loaded = await loadCheckpoint(storage, "cms", IDENTITY);
    assert.deepEqual(loaded?.items, configMaps(100));
  } finally {
    await close();
  }
});

test("fileCheckpointStorage never reads a temporary file a killed process left behind", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(3),
    });
    await writeFile(
      join(dir, "cms.checkpoint.tmp-dead"),
      '{"format":"kube-reflector-checkpoint","vers',
    );
    assert.equal((await loadCheckpoint(storage, "cms", IDENTITY))?.resourceVersion, "1");
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "2",
      items: configMaps(3),
    });
    assert.equal((await loadCheckpoint(storage, "cms", IDENTITY))?.resourceVersion, "2");
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: a get reads the file it opened, even if a put replaces it meanwhile", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    const old = new Uint8Array(200_000).fill(0x61);
    await storage.put("k", chunksThen([old]));
    const reading = (await storage.get("k"))!;
    await storage.put("k", chunksThen([new Uint8Array(300_000).fill(0x62)]));
    assert.deepEqual(await readAll(reading), old);
  } finally {
    await close();
  }
});

test("fileCheckpointStorage closes the file when a reader leaves early", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await storage.put("k", chunksThen([new Uint8Array(300_000)]));
    for await (const _ of (await storage.get("k"))!) break;
    // (Deno's resource sanitizer fails this test if the file stayed open)
  } finally {
    await close();
  }
});
