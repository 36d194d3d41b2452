import assert from "node:assert/strict";
import type { KubeObject } from "../../mod.ts";
import { e2eTest } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps, rng, unexpectedErrors } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

e2eTest(
  "a reflector over ConfigMaps keeps up with 300 random creates, updates and deletes (store = server, RV by RV)",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces("e2e-churn", "e2e-other");
      await churnConfigMaps(admin, "e2e-churn", { ops: 50, seed: 7 });
      const conn = await connect("token");
      const target = {
        apiVersion: "v1",
        resource: "configmaps",
        kind: "ConfigMap",
        namespace: "e2e-churn",
      };
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      const counts = await Promise.all([
        churnConfigMaps(admin, "e2e-churn", {
          ops: 300,
          seed: 42,
          concurrency: 6,
          prefix: "churn",
        }),
        churnConfigMaps(admin, "e2e-other", { ops: 40, seed: 3 }), // noise outside the namespace
      ]);
      assert.ok(counts[0].deleted > 20 && counts[0].updated > 50, JSON.stringify(counts[0]));
      await assertStoreEqualsServer(r, admin, target);
      assert.ok(r.store.list().every((o) => o.metadata.namespace === "e2e-churn"));
      assert.deepEqual(unexpectedErrors(r), []);
    }),
);

e2eTest(
  "a reflector over apps/v1 Deployments follows creates, scales and deletes",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces("e2e-apps");
      const base = "/apis/apps/v1/namespaces/e2e-apps/deployments";
      const deployment = (name: string, replicas: number): KubeObject => ({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, namespace: "e2e-apps" },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: "c", image: "busybox" }] },
          },
        },
      } as KubeObject);
      for (let i = 0; i < 5; i++) {
        await admin.requestJson(base, { method: "POST", body: deployment(`web-${i}`, 1) });
      }
      const conn = await connect("cert");
      const target = {
        apiVersion: "apps/v1",
        resource: "deployments",
        kind: "Deployment",
        namespace: "e2e-apps",
      };
      const r = reflect(conn.client, target);
      await r.reflector.synced;
      assert.equal(r.store.list().length, 5);
      const random = rng(5);
      for (let i = 0; i < 30; i++) {
        const name = `web-${Math.floor(random() * 8)}`;
        const current = await admin.requestJson<KubeObject>(`${base}/${name}`).catch(() =>
          undefined
        );
        if (!current) {
          await admin.requestJson(base, {
            method: "POST",
            body: deployment(name, 1),
          });
        } else if (random() < 0.7) {
          const spec = {
            ...(current.spec as Record<string, unknown>),
            replicas: Math.floor(random() * 5),
          };
          await admin.requestJson(`${base}/${name}`, {
            method: "PUT",
            body: { ...current, spec },
          });
        } else await admin.requestJson(`${base}/${name}`, { method: "DELETE" });
      }
      await assertStoreEqualsServer(r, admin, target);
      assert.ok(
        r.store.list().every((o) => o.kind === "Deployment" && o.apiVersion === "apps/v1"),
      );
      assert.deepEqual(unexpectedErrors(r), []);
    }),
);
