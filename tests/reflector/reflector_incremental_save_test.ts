/**
 * A Reflector's saves stay incremental across quiet saves, and a stored
 * checkpoint it could not load is replaced even at the same version.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { cm, ev } from "./_scripted_lister_watcher.ts";
import { bookmark } from "./_catch_up_pages.ts";
import { identity, start } from "./_fed_reflector.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";

test("a Reflector save that wrote nothing (the version moved by a bookmark, no change) keeps the next save incremental", async () => {
  const storage = memoryCheckpointStorage();
  // enough objects that one change is far below the compaction ratio
  const many = Array.from({ length: 20 }, (_, i) => cm(`cm-${i}`, "5", { i: String(i) }));
  const t = await start(storage, { objects: many });
  await t.reflector.synced;
  assert.equal((await t.reflector.saveCheckpoint()).written, "base");
  await t.apply("12", bookmark("12"));
  assert.equal((await t.reflector.saveCheckpoint()).written, "none");
  await t.apply("13", ev("MODIFIED", cm("cm-1", "13", { v: "2" })));
  const saved = await t.reflector.saveCheckpoint();
  assert.equal(
    saved.written,
    "log",
    "one change after a quiet save is a log piece, not a snapshot",
  );
  const loaded = await loadCheckpoint(storage, "k", identity);
  assert.equal(loaded?.resourceVersion, "13");
  assert.equal(loaded?.items.length, 20);
  assert.deepEqual(loaded?.items.find((o) => o.metadata.name === "cm-1")?.data, { v: "2" });
  await t.stop();
});

test("a Reflector whose stored checkpoint could not be loaded replaces it, even at the same version", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "10", items: [cm("a", "5")] });
  // damage the snapshot: the head still names it
  const values = storage as unknown as { get: CheckpointStorage["get"] };
  const head = await loadCheckpoint(storage, "k", identity);
  assert.ok(head);
  const chunks: Uint8Array[] = [];
  const body = await values.get("k");
  for await (const c of body!) chunks.push(c);
  const text = new TextDecoder().decode(chunks.length === 1 ? chunks[0] : new Uint8Array());
  const gen = /"gen":"([0-9a-f]{16})"/.exec(text)![1];
  await storage.put(
    `k/base/${gen}`,
    (async function* () {
      yield new TextEncoder().encode("{}\n");
    })(),
  );
  const t = await start(storage);
  await t.reflector.synced; // listed at 10: the same version as the damaged checkpoint
  const saved = await t.reflector.saveCheckpoint();
  assert.equal(saved.written, "base");
  const loaded = await loadCheckpoint(storage, "k", identity);
  assert.deepEqual(loaded?.items.map((o) => o.metadata.name), ["a", "b"]);
  await t.stop();
});
