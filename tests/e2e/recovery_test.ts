import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { KubeStatusError } from "../../mod.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const target = {
  apiVersion: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespace: "e2e-recovery",
};

e2eTest(
  "the API server restarted mid-watch: the reflector reconnects and store = server",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 40, seed: 11 });
      const conn = await connect("token");
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      await churnConfigMaps(admin, target.namespace, { ops: 30, seed: 12, prefix: "before" });
      await assertStoreEqualsServer(r, admin, target);
      await cluster.restartApiserver({ downMs: 1500 });
      await churnConfigMaps(admin, target.namespace, { ops: 60, seed: 13, prefix: "after" });
      await assertStoreEqualsServer(r, admin, target);
      assert.ok(r.errors.length > 0, "the outage was reported to onError");
    }),
);

e2eTest(
  "after an API server outage, a change made once /readyz passes reaches the store within seconds (default options)",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 20, seed: 41 });
      const conn = await connect("token");
      const r = reflect(conn.client, target, {}); // the default backoffs
      await r.reflector.synced;
      await eventually(() => r.reflector.status.watching, "watching", 10_000);
      await cluster.stopApiserver();
      // long enough for the reconnect backoff to reach its cap (0.8, 1.6, 2 s ...)
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      assert.equal(r.reflector.status.watching, false, "the status shows the store is stale");
      await cluster.startApiserver(); // returns once /readyz passes
      const readyAt = Date.now();
      await admin.requestJson(`/api/v1/namespaces/${target.namespace}/configmaps`, {
        method: "POST",
        body: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after-outage" } },
      });
      await eventually(
        () => r.store.getByKey(`${target.namespace}/after-outage`) !== undefined,
        "the change in the store",
        30_000,
      );
      const ms = Date.now() - readyAt;
      // A measurement (the exact bound is tested on fake time in
      // recovery_rules_test.ts); the loose bound only catches a return of
      // the old behaviour (85 s: both backoffs at their 30 s cap, twice).
      console.log(`e2e: change reached the store ${ms} ms after /readyz passed`);
      assert.ok(ms < 20_000, `caught up ${ms} ms after the server was ready`);
      await assertStoreEqualsServer(r, admin, target);
    }),
);

e2eTest(
  "etcd compacted with the watch cache off: the next watch gets a real 410, the reflector relists",
  (release) =>
    withCluster(
      release,
      { noWatchCache: true, proxy: true },
      async ({ cluster, admin, namespaces, connect, reflect }) => {
        await namespaces(target.namespace);
        await churnConfigMaps(admin, target.namespace, { ops: 40, seed: 21 });
        const conn = await connect("proxy");
        const r = reflect(conn.client, target);
        await r.reflector.synced;
        await assertStoreEqualsServer(r, admin, target);
        // Cut the reflector off (its proxy goes away), change and delete objects behind its back, compact.
        await cluster.stopProxy();
        await churnConfigMaps(admin, target.namespace, { ops: 80, seed: 22, prefix: "hidden" });
        const list = await admin.requestJson<{ items: Array<{ metadata: { name: string } }> }>(
          `/api/v1/namespaces/${target.namespace}/configmaps`,
        );
        for (const o of list.items.slice(0, 5)) {
          await admin.requestJson(
            `/api/v1/namespaces/${target.namespace}/configmaps/${o.metadata.name}`,
            { method: "DELETE" },
          );
        }
        await cluster.compactEtcd();
        await cluster.startProxy();
        await assertStoreEqualsServer(r, admin, target);
        const expired = r.errors.filter((e) =>
          e.error instanceof KubeStatusError && e.error.code === 410
        );
        assert.ok(
          expired.length > 0,
          `a 410 was seen: ${r.errors.map((e) => `${e.phase}: ${e.error}`).join("; ")}`,
        );
      },
    ),
);

e2eTest(
  "a token rotated in its file and the old one revoked: the reflector carries on",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 30, seed: 31 });
      const conn = await connect("token");
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      await writeFile(cluster.clientTokenFile, "tok-rotated\n");
      await cluster.setServerToken("tok-rotated"); // tok-initial is no longer accepted
      await cluster.restartApiserver();
      await churnConfigMaps(admin, target.namespace, { ops: 40, seed: 32, prefix: "rotated" });
      await assertStoreEqualsServer(r, admin, target);
      const unauthorized = r.errors.filter((e) =>
        e.error instanceof KubeStatusError && e.error.code === 401
      );
      assert.deepEqual(unauthorized, [], "the 401 was absorbed by one token refresh");
      const text = r.errors.map((e) => `${e.error} ${(e.error as Error)?.stack}`).join("\n");
      assert.ok(!text.includes("tok-initial") && !text.includes("tok-rotated"));
    }),
);
