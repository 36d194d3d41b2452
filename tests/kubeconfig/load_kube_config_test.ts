import assert from "node:assert/strict";
import { KubeNetworkError } from "../../mod.ts";
import { KubeConfigError, loadKubeConfig } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { b64, kubeconfig, listOnce, toYaml, withTls, writeConfig } from "./_helpers.ts";

test("loadKubeConfig trusts the cluster CA file and sends the bearer token", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority": "ca.crt" }, // relative to the kubeconfig's folder
        { token: "tok-one" },
        { namespace: "team-a" },
      ),
    );
    const conn = await loadKubeConfig({ path, env: {} });
    assert.equal(conn.namespace, "team-a");
    assert.equal(conn.context, "test");
    assert.equal(await listOnce(conn), 0);
    assert.equal(server.seen[0].authorization, "Bearer tok-one");
    assert.equal(server.seen[0].path, "/api/v1/namespaces/team-a/configmaps");
  }, { accept: ["Bearer tok-one"] }));

test("loadKubeConfig presents a client certificate from files", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority": pki.ca.certPath },
        { "client-certificate": "client.crt", "client-key": "./client.key" },
      ),
    );
    const conn = await loadKubeConfig({ path, env: {} });
    assert.equal(conn.namespace, "default");
    assert.equal(await listOnce(conn), 0);
    assert.equal(server.seen[0].clientCn, "alice");
    assert.equal(server.seen[0].authorization, undefined);
  }, { accept: ["Bearer nobody"] }));

test("loadKubeConfig presents a client certificate from -data fields", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority-data": b64(pki.ca.cert) },
        { "client-certificate-data": b64(pki.client.cert), "client-key-data": b64(pki.client.key) },
      ),
    );
    assert.equal(await listOnce(await loadKubeConfig({ path, env: {} })), 0);
    assert.equal(server.seen[0].clientCn, "alice");
  }, { accept: ["Bearer nobody"] }));

test("loadKubeConfig sends basic credentials", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority-data": b64(pki.ca.cert) },
        { username: "admin", password: "pa:ss" },
      ),
    );
    assert.equal(await listOnce(await loadKubeConfig({ path, env: {} })), 0);
    assert.equal(server.seen[0].authorization, `Basic ${b64("admin:pa:ss")}`);
  }, { accept: [`Basic ${b64("admin:pa:ss")}`] }));

test("insecure-skip-tls-verify connects without a CA only when the file says so", () =>
  withTls(async (pki, server) => {
    const insecure = await writeConfig(
      pki.dir,
      "insecure",
      kubeconfig(
        { server: server.url, "insecure-skip-tls-verify": true },
        { token: "t" },
      ),
    );
    assert.equal(await listOnce(await loadKubeConfig({ path: insecure, env: {} })), 0);
    const strict = await writeConfig(
      pki.dir,
      "strict",
      kubeconfig({ server: server.url }, { token: "t" }),
    );
    await assert.rejects(
      listOnce(await loadKubeConfig({ path: strict, env: {} })),
      KubeNetworkError,
    );
  }));

test("a wrong CA fails the request with a KubeNetworkError", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig(
        { server: server.url, "certificate-authority": pki.otherCa.certPath },
        { token: "t" },
      ),
    );
    const err = await listOnce(await loadKubeConfig({ path, env: {} })).catch((e) => e);
    assert.ok(err instanceof KubeNetworkError, String(err));
    assert.match(err.message, /^GET \/api\/v1\/namespaces\/default\/configmaps: network error/);
  }));

test("tls-server-name verifies the certificate against that name", () =>
  withTls(async (pki, server) => {
    const cluster = { server: server.url, "certificate-authority": pki.ca.certPath };
    const without = await writeConfig(pki.dir, "without", kubeconfig(cluster, { token: "t" }));
    await assert.rejects(
      listOnce(await loadKubeConfig({ path: without, env: {} })),
      KubeNetworkError,
    );
    const named = await writeConfig(
      pki.dir,
      "named",
      kubeconfig({ ...cluster, "tls-server-name": "kube.test" }, { token: "t" }),
    );
    assert.equal(await listOnce(await loadKubeConfig({ path: named, env: {} })), 0);
  }, { named: true }));

test("KUBECONFIG merges files: the first wins per name and for current-context", () =>
  withTls(async (pki, server) => {
    const a = await writeConfig(pki.dir, "a.yaml", {
      "current-context": "ctx-a",
      contexts: [{ name: "ctx-a", context: { cluster: "c", user: "u", namespace: "from-a" } }],
      users: [{ name: "u", user: { token: "tok-a" } }],
    });
    const b = await writeConfig(pki.dir, "b.yaml", {
      "current-context": "ctx-b",
      clusters: [{ name: "c", cluster: { server: server.url, "certificate-authority": "ca.crt" } }],
      contexts: [
        { name: "ctx-a", context: { cluster: "c", user: "u", namespace: "from-b" } },
        { name: "ctx-b", context: { cluster: "c", user: "u", namespace: "ns-b" } },
      ],
      users: [{ name: "u", user: { token: "tok-b" } }],
    });
    const env = { KUBECONFIG: `${a}:${pki.dir}/missing.yaml:${b}` };
    const conn = await loadKubeConfig({ env });
    assert.equal(conn.context, "ctx-a");
    assert.equal(conn.namespace, "from-a");
    assert.equal(await listOnce(conn), 0);
    assert.equal(server.seen[0].authorization, "Bearer tok-a");
    const other = await loadKubeConfig({ env, context: "ctx-b" });
    assert.equal(other.namespace, "ns-b");
    await other.close();
  }));

test("~/.kube/config is the default", () =>
  withTls(async (pki, server) => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(`${pki.dir}/.kube`);
    await writeConfig(
      `${pki.dir}/.kube`,
      "config",
      kubeconfig({ server: server.url, "certificate-authority": "../ca.crt" }, { token: "t" }),
    );
    assert.equal(await listOnce(await loadKubeConfig({ env: { HOME: pki.dir } })), 0);
  }));

test("a kubeconfig given as text works without a file system", () =>
  withTls(async (pki, server) => {
    const text = toYaml(
      kubeconfig({ server: server.url, "certificate-authority-data": b64(pki.ca.cert) }, {
        token: "t",
      }),
    );
    assert.equal(await listOnce(await loadKubeConfig({ text, env: {} })), 0);
  }));

test("an unknown auth-provider is refused with a KubeConfigError", () =>
  withTls(async (pki, server) => {
    const path = await writeConfig(
      pki.dir,
      "config",
      kubeconfig({ server: server.url }, { "auth-provider": { name: "gcp" } }),
    );
    const err = await loadKubeConfig({ path, env: {} }).catch((e) => e);
    assert.ok(err instanceof KubeConfigError);
    assert.equal(err.field, "users[test-user].user.auth-provider");
  }));
