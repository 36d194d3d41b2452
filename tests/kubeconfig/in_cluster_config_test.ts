import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inClusterConfig, KubeConfigError } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { listOnce, withTls } from "./_helpers.ts";

test("inClusterConfig uses the service host, CA, namespace and token files", () =>
  withTls(async (pki, server) => {
    await writeFile(join(pki.dir, "token"), "sa-token-1\n");
    await writeFile(join(pki.dir, "namespace"), "kube-system");
    const paths = {
      tokenPath: join(pki.dir, "token"),
      caPath: pki.ca.certPath,
      namespacePath: join(pki.dir, "namespace"),
    };
    const conn = await inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(server.port) },
      ...paths,
    });
    assert.equal(conn.namespace, "kube-system");
    assert.equal(conn.server, server.url);
    try {
      await conn.client.request("/api").then((r) => r.body?.cancel());
      await writeFile(paths.tokenPath, "sa-token-2\n"); // the kubelet rotated the projected token
      server.accept.clear();
      server.accept.add("Bearer sa-token-2");
      await conn.client.request("/api").then((r) => r.body?.cancel());
      assert.deepEqual(server.seen.map((s) => s.authorization), [
        "Bearer sa-token-1",
        "Bearer sa-token-1",
        "Bearer sa-token-2",
      ]);
    } finally {
      await conn.close();
    }
  }, { accept: ["Bearer sa-token-1"] }));

test("inClusterConfig defaults the namespace and fails clearly outside a cluster", () =>
  withTls(async (pki, server) => {
    await writeFile(join(pki.dir, "token"), "t");
    const conn = await inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(server.port) },
      tokenPath: join(pki.dir, "token"),
      caPath: pki.ca.certPath,
      namespacePath: join(pki.dir, "none"),
    });
    assert.equal(conn.namespace, "default");
    assert.equal(await listOnce(conn), 0);
    const err = await inClusterConfig({ env: {} }).catch((e) => e);
    assert.ok(err instanceof KubeConfigError);
    assert.equal(err.field, "KUBERNETES_SERVICE_HOST");
    const noToken = await inClusterConfig({
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: "1" },
      tokenPath: join(pki.dir, "missing-token"),
      caPath: pki.ca.certPath,
    }).catch((e) => e);
    assert.ok(noToken instanceof KubeConfigError);
    assert.equal(noToken.file, join(pki.dir, "missing-token"));
  }));
