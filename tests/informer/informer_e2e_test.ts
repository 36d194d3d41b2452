/**
 * Informer scenarios end to end: an informer over `resourceListerWatcher`
 * and `KubeClient`, against the fake API server over real loopback HTTP.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { InformerOptions } from "../../src/informer/informer_options.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer, type FakeApiServerOptions } from "../../testkit.ts";
import { until } from "./_fake_lister_watcher.ts";
import { Recorder } from "./_recorder.ts";

const cm = (name: string, namespace = "fx", data: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});

interface Run {
  server: FakeApiServer;
  informer: Informer;
  rec: Recorder;
}

async function withServer(
  options: { server?: FakeApiServerOptions; informer?: InformerOptions<KubeObject> },
  fn: (r: Run) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start(options.server);
  const ac = new AbortController();
  let done = Promise.resolve();
  try {
    for (const name of ["a", "b", "c"]) server.create(cm(name));
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    });
    const informer = new Informer(lw, {
      name: "e2e",
      expectedKind: "ConfigMap",
      backoff: { initialMs: 20, capMs: 200, jitter: 0.5 },
      shortWatchMs: 50,
      onError: () => {},
      ...options.informer,
    });
    const rec = new Recorder();
    informer.addEventHandler(rec);
    done = informer.run({ signal: ac.signal });
    await informer.waitForSync({ signal: AbortSignal.timeout(5_000) });
    await server.waitForWatch();
    await fn({ server, informer, rec });
  } finally {
    ac.abort();
    await done;
    await server.close();
  }
}

function cacheEqualsServer(informer: Informer, server: FakeApiServer): boolean {
  const want = server.objects({ resource: "configmaps", namespace: "fx" })
    .map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();
  const got = informer.indexer.list().map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)
    .sort();
  return JSON.stringify(want) === JSON.stringify(got);
}

test("e2e scenario 11: deletes while disconnected become tombstones after the relist", async () => {
  await withServer({}, async ({ server, informer, rec }) => {
    const a = server.get(cm("a"))!;
    await server.goDown();
    server.delete(cm("a"));
    server.delete(cm("b"));
    server.upsert(cm("c", "fx", { v: "2" }));
    server.create(cm("d"));
    server.compact(); // the watch's resourceVersion is gone: a relist is needed
    await server.comeUp();
    await until(() => rec.events.length === 7, "the relist's changes", 10_000);
    assert.deepEqual(rec.events.slice(3).map((e) => e.replace(/@.*/, "")), [
      "update fx/c",
      "add fx/d",
      "tombstone fx/a",
      "tombstone fx/b",
    ]);
    const tomb = rec.deleted[0] as DeletedFinalStateUnknown<KubeObject>;
    assert.ok(tomb instanceof DeletedFinalStateUnknown);
    assert.equal(tomb.obj.metadata.resourceVersion, a.metadata.resourceVersion);
    assert.ok(cacheEqualsServer(informer, server), "store = server");
  });
});

test("e2e scenario 12: bookmarks advance the resourceVersion, handlers never hear of them", async () => {
  await withServer({ server: { bookmarkIntervalMs: 10 } }, async ({ server, informer, rec }) => {
    const listed = informer.lastSyncResourceVersion;
    server.create(cm("elsewhere", "other")); // moves the global resourceVersion, not our objects
    await until(() => informer.lastSyncResourceVersion !== listed, "a bookmark", 5_000);
    const bookmarked = informer.lastSyncResourceVersion;
    assert.equal(bookmarked, server.resourceVersion);
    const since = server.requestCount;
    server.endWatches();
    const [next] = await server.waitForRequests((r) => r.verb === "watch", { since });
    assert.equal(
      next.query.get("resourceVersion"),
      bookmarked,
      "the next watch starts at the bookmark",
    );
    assert.deepEqual(rec.events.map((e) => e.split(" ")[0]), ["add", "add", "add"]);
    assert.equal(server.requests.filter((r) => r.verb === "list").length, 1);
  });
});

test("e2e scenario 22: resync re-delivers every object as update(old === new) with no request", async () => {
  await withServer({ informer: { resyncPeriodMs: 25 } }, async ({ server, rec }) => {
    const requests = server.requestCount;
    await until(() => rec.of("sync").length >= 6, "two resyncs", 5_000);
    assert.deepEqual(rec.of("sync").slice(0, 3).map((e) => e.replace(/@.*/, "")), [
      "sync fx/a",
      "sync fx/b",
      "sync fx/c",
    ]);
    assert.equal(server.requestCount, requests, "no list or watch issued");
  });
});
