import assert from "node:assert/strict";
import { loadKubeConfig } from "../../kubeconfig.ts";
import { e2eTest, startCluster } from "./_cluster.ts";
import {
  assertStoreEqualsServer,
  churnConfigMaps,
  createNamespace,
  startReflector,
  unexpectedErrors,
} from "./_reflect.ts";

e2eTest(
  "a real kube-apiserver is reached over TLS with a token file, a client certificate, and through kubectl proxy",
  async (release) => {
    const cluster = await startCluster({ release, proxy: true });
    try {
      await createNamespace(cluster.admin.client, "e2e-connect");
      await churnConfigMaps(cluster.admin.client, "e2e-connect", { ops: 20 });
      for (const [kind, path] of Object.entries(cluster.kubeconfigs)) {
        const conn = await loadKubeConfig({ path, env: {} });
        const target = {
          apiVersion: "v1",
          resource: "configmaps",
          kind: "ConfigMap",
          namespace: "e2e-connect",
        };
        const r = startReflector(conn.client, target);
        try {
          await r.reflector.synced;
          assert.ok(r.store.list().length >= 5, `${kind}: synced ${r.store.list().length} objects`);
          await churnConfigMaps(cluster.admin.client, "e2e-connect", {
            ops: 10,
            seed: kind.length,
            prefix: kind,
          });
          await assertStoreEqualsServer(r, cluster.admin.client, target);
          assert.deepEqual(unexpectedErrors(r), [], `${kind}: no errors`);
        } finally {
          await r.stop();
          await conn.close();
        }
        assert.equal(conn.via, kind === "proxy" ? "native" : conn.via);
      }
    } finally {
      await cluster.stop();
    }
  },
);
