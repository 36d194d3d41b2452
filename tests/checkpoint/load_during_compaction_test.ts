// Regression (found in review): a load that read the head just before a save (same process, same storage) compacted
// the checkpoint finds the old snapshot deleted and fails "truncated", although a whole
// checkpoint was stored at every instant. catchUp then takes the checkpoint as unusable:
// it lists everything and replaces the snapshot.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const cm = (name: string, rv: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion: rv },
});

test("a load racing a compaction in the same process gets a whole checkpoint", async () => {
  const inner = memoryCheckpointStorage();
  let gate: Promise<void> | undefined;
  const storage: CheckpointStorage = {
    get: async (k, o) => {
      if (gate && k.includes("/base/")) await gate; // the load is slow to read the snapshot
      return inner.get(k, o);
    },
    put: (k, d, o) => inner.put(k, d, o),
    delete: (k, o) => inner.delete(k, o),
  };
  const items = Array.from({ length: 10 }, (_, i) => cm(`cm-${i}`, "5"));
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "10", items });
  let open!: () => void;
  gate = new Promise((r) => (open = r));
  const load = loadCheckpoint(storage, "k", identity); // reads the head, waits on the snapshot
  await new Promise((r) => setTimeout(r, 10));
  gate = undefined;
  const items2 = items.map((o) => o.metadata.name === "cm-1" ? cm("cm-1", "11") : o);
  const saved = await saveCheckpoint(storage, "k", {
    identity,
    resourceVersion: "11",
    items: items2,
    changes: { since: "10", objects: [["ns/cm-1", items2[1]]] },
  }, { maxLogRatio: 0.0001 }); // compaction
  assert.equal(saved.written, "base");
  open();
  const loaded = await load.catch((e) => e);
  assert.ok(!(loaded instanceof Error), `load failed: ${loaded}`);
});
