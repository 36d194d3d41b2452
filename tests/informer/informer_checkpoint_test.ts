import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Changes, configMap, FAST } from "../_harness.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { InformerOptions } from "../../src/informer/informer_options.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

/** Runs an informer over the ConfigMaps of `fx` with a checkpoint; returns what its handler saw. */
async function session(
  server: FakeApiServer,
  storage: CheckpointStorage,
  until: (informer: Informer<KubeObject>, seen: string[]) => boolean,
  options: Partial<InformerOptions<KubeObject>> = {},
): Promise<{ seen: string[]; syncedFrom: string[] }> {
  const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: "fx",
  });
  const informer = new Informer<KubeObject>(lw, {
    ...FAST,
    name: "cp",
    onError: () => {},
    checkpoint: { storage, key: "cms" },
    ...options,
  });
  const seen: string[] = [];
  const syncedFrom: string[] = [];
  const name = (o: KubeObject) => o.metadata.name;
  const changes = new Changes(); // each announcement re-checks `until`
  const announce = (what: string) => {
    seen.push(what);
    changes.notify();
  };
  informer.addEventHandler({
    onAdd: (o, initial) => announce(`${initial ? "initial " : ""}add ${name(o)}`),
    onUpdate: (old, o) =>
      announce(`update ${name(o)} ${old.metadata.resourceVersion}->${o.metadata.resourceVersion}`),
    onDelete: (o) =>
      announce(
        o instanceof DeletedFinalStateUnknown ? `delete ${o.key} (tombstone)` : `delete ${name(o)}`,
      ),
  });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  try {
    await informer.waitForSync();
    syncedFrom.push(String(informer.syncedFrom));
    await changes.until(() => until(informer, seen), "the informer caught up");
    syncedFrom.push(String(informer.syncedFrom));
  } finally {
    ac.abort();
    await done;
  }
  return { seen, syncedFrom };
}

async function seeded(
  server: FakeApiServer,
  storage: CheckpointStorage,
): Promise<Map<string, string>> {
  for (let i = 0; i < 5; i++) server.create(configMap(`cm-${i}`));
  await session(server, storage, (informer) => informer.hasSynced());
  return new Map(
    server.objects({ resource: "configmaps" }).map((
      o,
    ) => [o.metadata.name!, o.metadata.resourceVersion!]),
  );
}

function changeSome(server: FakeApiServer): { updatedRv: string } {
  server.create(configMap("new"));
  const updated = server.update(configMap("cm-1", "fx", { changed: "yes" }));
  server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-2" });
  return { updatedRv: updated.metadata.resourceVersion! };
}

test("an informer resuming from a checkpoint delivers exactly the changes since it, not the whole cache as adds", async () => {
  const server = await FakeApiServer.start();
  try {
    const storage = memoryCheckpointStorage();
    const rvs = await seeded(server, storage);
    const { updatedRv } = changeSome(server);
    const { seen, syncedFrom } = await session(server, storage, (_i, seen) => seen.length >= 3);
    assert.deepEqual(seen, [
      "add new",
      `update cm-1 ${rvs.get("cm-1")}->${updatedRv}`,
      "delete cm-2",
    ]);
    assert.deepEqual(syncedFrom, ["checkpoint", "server"]);
  } finally {
    await server.close();
  }
});

test("with replayCheckpointAsAdds an informer resuming from a checkpoint first delivers every checkpointed object as an initial add, as client-go does", async () => {
  const server = await FakeApiServer.start();
  try {
    const storage = memoryCheckpointStorage();
    await seeded(server, storage);
    changeSome(server);
    const { seen } = await session(server, storage, (_i, seen) => seen.length >= 8, {
      replayCheckpointAsAdds: true,
    });
    assert.deepEqual(seen.slice(0, 5).sort(), [0, 1, 2, 3, 4].map((i) => `initial add cm-${i}`));
    assert.deepEqual(seen.slice(5).map((s) => s.split(" ")[0]), ["add", "update", "delete"]);
  } finally {
    await server.close();
  }
});

test("an informer whose checkpoint is too old relists and delivers the difference from the checkpoint: adds, updates, and deletes as tombstones", async () => {
  const server = await FakeApiServer.start({ historySize: 2 });
  try {
    const storage = memoryCheckpointStorage();
    const rvs = await seeded(server, storage);
    const { updatedRv } = changeSome(server);
    for (let i = 0; i < 5; i++) server.create(configMap(`filler-${i}`, "elsewhere"));
    server.compact();
    const { seen, syncedFrom } = await session(server, storage, (_i, seen) => seen.length >= 3);
    assert.deepEqual(seen.sort(), [
      "add new",
      "delete fx/cm-2 (tombstone)",
      `update cm-1 ${rvs.get("cm-1")}->${updatedRv}`,
    ]);
    assert.deepEqual(syncedFrom, ["checkpoint", "server"]);
  } finally {
    await server.close();
  }
});
