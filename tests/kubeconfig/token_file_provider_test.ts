import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfigError, loadKubeConfig, tokenFileProvider } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { kubeconfig, listOnce, withTls, writeConfig } from "./_helpers.ts";

test("tokenFileProvider re-reads the file once the token is older than maxAgeMs", async () => {
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-tok-"));
  try {
    const path = join(dir, "token");
    await writeFile(path, "one\n");
    let now = 0;
    const provider = tokenFileProvider(path, { maxAgeMs: 1000, now: () => now });
    assert.equal(await provider({ refresh: false }), "one");
    await writeFile(path, "two");
    now = 999;
    assert.equal(await provider({ refresh: false }), "one");
    now = 1000;
    assert.equal(await provider({ refresh: false }), "two");
    await writeFile(path, "three");
    assert.equal(await provider({ refresh: true }), "three"); // after a 401: at once
    await rm(path);
    now = 5000;
    assert.equal(await provider({ refresh: true }), "three"); // unreadable: keep the last good token
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("tokenFileProvider without any readable token rejects with a KubeConfigError", async () => {
  const provider = tokenFileProvider("/nonexistent/token", {
    file: "/k/config",
    field: "users[u].user.tokenFile",
  });
  const err = await Promise.resolve(provider({ refresh: false })).catch((e) => e);
  assert.ok(err instanceof KubeConfigError);
  assert.equal(err.field, "users[u].user.tokenFile");
});

test("a rotated tokenFile is picked up after a 401", () =>
  withTls(async (pki, server) => {
    await writeFile(join(pki.dir, "token"), "old-token");
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority": "ca.crt" },
        { tokenFile: "token" },
      ),
    );
    const conn = await loadKubeConfig({ path, env: {} });
    try {
      await conn.client.request("/api/v1/namespaces/default/configmaps").then((r) =>
        r.body?.cancel()
      );
      await writeFile(join(pki.dir, "token"), "new-token\n");
      server.accept.clear();
      server.accept.add("Bearer new-token"); // the old one is revoked
      await conn.client.request("/api/v1/namespaces/default/configmaps").then((r) =>
        r.body?.cancel()
      );
      assert.deepEqual(server.seen.map((s) => s.authorization), [
        "Bearer old-token",
        "Bearer old-token",
        "Bearer new-token",
      ]);
    } finally {
      await conn.close();
    }
  }, { accept: ["Bearer old-token"] }));

test("listOnce closes the connection even when the request fails", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig({ server: server.url, "certificate-authority": "ca.crt" }, { token: "bad" }),
    );
    await assert.rejects(listOnce(await loadKubeConfig({ path, env: {} })), /401/);
  }, { accept: ["Bearer good"] }));
