import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { ReflectorStateError } from "../../src/reflector/reflector_state_error.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

const stateError = (reason: string, message: string) => (err: unknown) => {
  assert.ok(err instanceof ReflectorStateError, String(err));
  assert.equal(err.name, "ReflectorStateError");
  assert.equal(err.reason, reason);
  assert.equal(err.reflector, "cms");
  assert.equal(err.message, message);
  return true;
};

test("a second run() at once and a wait for a sync that a stop prevented reject with a ReflectorStateError naming the reflector", async () => {
  const server = await FakeApiServer.start();
  try {
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
      name: "cms",
    });
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    const synced = reflector.waitForSync();
    await assert.rejects(
      reflector.run({ signal: new AbortController().signal }),
      stateError("running", "Reflector cms: already running"),
    );
    ac.abort();
    await done;
    await assert.rejects(
      synced,
      stateError("stopped", "Reflector cms: stopped before its first sync"),
    );
  } finally {
    await server.close();
  }
});
