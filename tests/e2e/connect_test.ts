import assert from "node:assert/strict";
import { e2eTest } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps, unexpectedErrors } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const target = {
  apiVersion: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespace: "e2e-connect",
};

e2eTest(
  "a real kube-apiserver is reached over TLS with a token file, a client certificate, and through kubectl proxy",
  (release) =>
    withCluster(release, { proxy: true }, async ({ admin, namespaces, connect, reflect }) => {
      await namespaces(target.namespace);
      await churnConfigMaps(admin, target.namespace, { ops: 20 });
      for (const kind of ["token", "cert", "proxy"] as const) {
        const conn = await connect(kind);
        const r = reflect(conn.client, target);
        await r.reflector.synced;
        assert.ok(r.store.list().length >= 5, `${kind}: synced ${r.store.list().length} objects`);
        await churnConfigMaps(admin, target.namespace, {
          ops: 10,
          seed: kind.length,
          prefix: kind,
        });
        await assertStoreEqualsServer(r, admin, target);
        assert.deepEqual(unexpectedErrors(r), [], `${kind}: no errors`);
        // one at a time: stopped before the next starts
        await r.stop();
        await conn.close();
        assert.equal(conn.via, kind === "proxy" ? "native" : conn.via);
      }
    }),
);
