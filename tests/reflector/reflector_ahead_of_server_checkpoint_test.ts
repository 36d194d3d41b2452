// Regression (found in review): a Reflector restored from a checkpoint ahead of the server (etcd restored from a
// backup) relists, but its saves then write nothing ("a newer save is stored"): the stale
// checkpoint at the future version stays, and every restart loads it again.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, events, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };

test("a Reflector that relisted below its checkpoint's version replaces the checkpoint", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "900", items: [cm("a", "800")] });
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("b", "30")];
  lw.resourceVersion = "40"; // the cluster was restored from a backup: behind the checkpoint
  lw.onWatch = (o, n) => {
    if (o.resourceVersion === "900") {
      // the checkpoint's version is unknown to the restored server: 410
      return events(
        [{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } } as never],
        o,
        "close",
      );
    }
    return events([], o);
  };
  const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
    clock,
    random: () => 0,
    useStreamingList: false,
    onError: () => {},
    checkpoint: { storage, key: "k", identity, saveOnStop: false },
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  for (let i = 0; i < 3000 && reflector.lastSyncResourceVersion !== "40"; i++) {
    await clock.advance(100);
  }
  console.log(
    lw.calls.map((c) => `${c.verb}@${c.rv}`).slice(0, 12),
    reflector.lastSyncResourceVersion,
  );
  const saved = await reflector.saveCheckpoint();
  ac.abort();
  await clock.flush();
  await done;
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
