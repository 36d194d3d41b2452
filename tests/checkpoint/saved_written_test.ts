// Regression (found in review): SavedCheckpoint.written "version" is documented as "the head only: no
// change, the version advanced", but a save at the stored version that only drops a stored
// list in progress (listed: true) reports "version" while the version did not move.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const cm = (name: string, rv: string) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "ns", resourceVersion: rv },
});

test("written 'version' only when the version advanced", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "10", items: [cm("a", "5")] });
  await saveCheckpoint(storage, "k", {
    identity,
    resourceVersion: "10",
    items: [cm("a", "5")],
    progress: { items: [cm("a", "5")], continue: "c1", resourceVersion: "10" },
  });
  const r = await saveCheckpoint(storage, "k", {
    identity,
    resourceVersion: "10",
    items: [cm("a", "5")],
    changes: { since: "10", objects: [] },
    listed: true,
  });
  assert.equal(r.resourceVersion, "10");
  assert.notEqual(r.written, "version", "the version did not advance");
});
