/**
 * What only a current kube-apiserver does: streaming lists end to end,
 * the WatchList gate off, periodic bookmarks, metadata-only watches.
 */
import assert from "node:assert/strict";
import {
  Indexer,
  type KubeObject,
  metaNamespaceKeyFunc,
  Reflector,
  resourceListerWatcher,
  serverFeatures,
  StreamingListUnsupportedError,
} from "../../mod.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import {
  assertStoreEqualsServer,
  churnConfigMaps,
  configMap,
  type RunningReflector,
  unexpectedErrors,
} from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const target = {
  apiVersion: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespace: "e2e-now",
};

/** Creates `n` ConfigMaps, `concurrency` requests at a time. */
async function createMany(
  admin: import("../../mod.ts").KubeClient,
  n: number,
  concurrency = 16,
): Promise<void> {
  let next = 0;
  const base = `/api/v1/namespaces/${target.namespace}/configmaps`;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      await admin.requestJson(base, {
        method: "POST",
        body: configMap(`bulk-${i}`, target.namespace, { i: String(i) }),
      });
    }
  }));
}

for (const noWatchCache of [false, true]) {
  e2eTest(
    `streaming list of 10k objects with creates, updates and deletes racing the initial events${
      noWatchCache ? " (watch cache off)" : ""
    }: store = a fresh consistent list`,
    (release) =>
      withCluster(release, { noWatchCache }, async ({ admin, namespaces, connect, reflect }) => {
        await namespaces(target.namespace);
        await createMany(admin, 10_000);
        const conn = await connect("token");
        const lists: string[] = [];
        const r = reflect(conn.client, target, {
          observer: { listDone: (i) => lists.push(i.resourceVersion), relist: () => {} },
        });
        // changes racing the initial events
        const churn = churnConfigMaps(admin, target.namespace, {
          ops: 300,
          seed: 51,
          prefix: "race",
        });
        await r.reflector.synced;
        await churn;
        await assertStoreEqualsServer(r, admin, target, 60_000);
        assert.ok(r.store.listKeys().length >= 10_000);
        if (!noWatchCache) {
          assert.equal(
            serverFeatures(conn.client.server).streamingList,
            true,
            "synced by streaming",
          );
          assert.deepEqual(unexpectedErrors(r), []);
        }
        // the same stream goes on as a normal watch
        await churnConfigMaps(admin, target.namespace, { ops: 60, seed: 52, prefix: "after" });
        await assertStoreEqualsServer(r, admin, target);
      }),
    { only: "current" },
  );
}

e2eTest(
  "streaming list interrupted by a kill -9 restart of the API server mid-stream: store = server after",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await createMany(admin, 3_000);
      const conn = await connect("token");
      const r = reflect(conn.client, target);
      await cluster.restartApiserver({ downMs: 500 }); // likely while the initial events stream
      await churnConfigMaps(admin, target.namespace, { ops: 50, seed: 53, prefix: "restart" });
      await r.reflector.synced;
      await assertStoreEqualsServer(r, admin, target, 60_000);
    }),
  { only: "current" },
);

e2eTest(
  "a server without streaming lists (1.20; 1.37 with the WatchList gate off): one refused request, then list + watch, remembered for the server",
  (release) =>
    withCluster(release, {
      apiserverArgs: release.current ? ["--feature-gates=WatchList=false"] : [],
    }, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 30, seed: 54 });
      const conn = await connect("token");
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      await assertStoreEqualsServer(r, admin, target);
      const refusals = r.errors.filter((e) => e.error instanceof StreamingListUnsupportedError);
      assert.equal(refusals.length, 1, "one refused request");
      // names the server's version (Debian's 1.20 build answers /version with v0.0.0-master)
      assert.match(
        String(refusals[0].error),
        release.current ? new RegExp(release.version.replaceAll(".", "\\.")) : /kube-apiserver v/,
      );
      assert.equal(serverFeatures(conn.client.server).streamingList, false);
      const again = reflect(conn.client, target);
      await again.reflector.synced;
      assert.equal(
        again.errors.filter((e) => e.error instanceof StreamingListUnsupportedError).length,
        0,
        "not asked again",
      );
    }),
);

e2eTest(
  "metadata-only (PartialObjectMetadata) lists and watches against the real server",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, defer }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 30, seed: 55 });
      const conn = await connect("token");
      const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
      const lw = resourceListerWatcher(conn.client, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: target.namespace,
        metadataOnly: true,
      });
      const errors: unknown[] = [];
      const reflector = new Reflector(lw, store, {
        expectedKind: "PartialObjectMetadata",
        onError: (e) => errors.push(e),
      });
      const ac = new AbortController();
      const done = reflector.run({ signal: ac.signal });
      defer(() => (ac.abort(), done));
      await reflector.synced;
      await churnConfigMaps(admin, target.namespace, { ops: 20, seed: 56, prefix: "meta" });
      const r: RunningReflector = { store, reflector, errors: [], stop: async () => {} };
      await assertStoreEqualsServer(r, admin, target);
      for (const o of store.list()) {
        assert.equal((o as { data?: unknown }).data, undefined, "metadata only");
        assert.ok(o.metadata.name);
      }
      assert.deepEqual(
        errors.filter((e) => !(e instanceof StreamingListUnsupportedError)),
        [],
      );
    }),
);

e2eTest(
  "periodic bookmarks advance lastSyncResourceVersion without touching the store, and teach the server's interval",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 10, seed: 57 });
      const conn = await connect("token");
      const bookmarks: Array<{ at: number; rv: string }> = [];
      const r = reflect(conn.client, target, {
        observer: {
          event: (type, rv) => type === "BOOKMARK" && bookmarks.push({ at: Date.now(), rv }),
        },
      });
      await r.reflector.synced;
      const keys = r.store.listKeys().sort().join();
      const before = r.reflector.lastSyncResourceVersion;
      // another namespace's writes move the resourceVersion on, not this store
      await namespaces("e2e-elsewhere");
      await churnConfigMaps(admin, "e2e-elsewhere", { ops: 5, seed: 58 });
      const watched = bookmarks.length; // the streaming list's end bookmark
      await eventually(() => bookmarks.length >= watched + 2, "two periodic bookmarks", 200_000);
      assert.equal(keys, r.store.listKeys().sort().join(), "the store untouched");
      assert.notEqual(r.reflector.lastSyncResourceVersion, before, "the version moved on");
      const interval = serverFeatures(conn.client.server).bookmarkIntervalMs;
      console.log(`e2e: periodic bookmarks every ${interval} ms on ${release.version}`);
      assert.ok(interval !== undefined && interval <= 90_000, `interval learnt: ${interval}`);
    }),
  { only: "current" },
);
