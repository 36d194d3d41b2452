// Regression: a Reflector restored from a checkpoint ahead of the server (etcd restored from a
// backup) relists and replaces that checkpoint, so a restart does not load it again.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm } from "./_scripted_lister_watcher.ts";
import { identity, start } from "./_fed_reflector.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";

test("a Reflector that relisted below its checkpoint's version replaces the checkpoint", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "900", items: [cm("a", "800")] });
  const { clock, lw, reflector, stop } = await start(storage, {
    objects: [cm("b", "30")],
    resourceVersion: "40", // the cluster was restored from a backup: behind the checkpoint
    expired: "900", // the checkpoint's version is unknown to the restored server: 410
  });
  for (let i = 0; i < 3000 && reflector.lastSyncResourceVersion !== "40"; i++) {
    await clock.advance(100);
  }
  console.log(
    lw.calls.map((c) => `${c.verb}@${c.rv}`).slice(0, 12),
    reflector.lastSyncResourceVersion,
  );
  const saved = await reflector.saveCheckpoint();
  await stop();
  const loaded = await loadCheckpoint(storage, "k", identity);
  console.log(
    "saved:",
    saved.written,
    "stored:",
    loaded?.resourceVersion,
    loaded?.items.map((o) => o.metadata.name),
  );
  assert.notEqual(saved.written, "none");
  assert.equal(loaded?.resourceVersion, "40");
  assert.deepEqual(loaded?.items.map((o) => o.metadata.name), ["b"]);
});
