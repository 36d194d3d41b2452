import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../src/testkit/fake_api_server.ts";

const pod = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "prod" },
  spec: { containers: [] },
});

for (const streamingList of [false, true]) {
  test(`metadataOnly informer with expectedKind "Pod" syncs and hears changes (streaming list ${streamingList})`, async () => {
    const server = await FakeApiServer.start({ streamingList });
    server.create(pod("a"));
    const errors: unknown[] = [];
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "pods",
      metadataOnly: true,
    });
    const informer = new Informer(lw, {
      name: "pods",
      expectedKind: "Pod",
      useStreamingList: streamingList,
      onError: (err) => void errors.push(err),
    });
    const added: string[] = [];
    let sawB!: () => void;
    const b = new Promise<void>((resolve) => (sawB = resolve));
    informer.addEventHandler({
      onAdd: (o) => {
        added.push(`${o.kind} ${o.metadata.name}`);
        if (o.metadata.name === "b") sawB();
      },
    });
    const ac = new AbortController();
    const done = informer.run({ signal: ac.signal });
    try {
      await informer.waitForSync({ signal: AbortSignal.timeout(5000) });
      server.create(pod("b"));
      await b;
      assert.deepEqual(added, ["PartialObjectMetadata a", "PartialObjectMetadata b"]);
      assert.equal((informer.lister().get("prod", "a") as { spec?: unknown }).spec, undefined);
      assert.deepEqual(errors, []);
    } finally {
      ac.abort();
      await done;
      await server.close();
    }
  });
}
