// Each kubeconfig credential type over TLS on Bun (Bun's fetch `tls`
// option), from the npm build, with the kubeconfig tests' own PKI (openssl)
// and helpers compiled into npm/esm/tests/kubeconfig, against a node:tls
// twin of their test server (see _tls_server.mjs for why).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { check, esm, expect } from "./_check.mjs";
import { startTlsServer } from "./_tls_server.mjs";

const { KubeNetworkError } = await import(`${esm}/mod.js`);
const { loadKubeConfig } = await import(`${esm}/kubeconfig.js`);
const { createPki } = await import(`${esm}/tests/kubeconfig/_pki.js`);
const { b64, kubeconfig, listOnce, toYaml } = await import(`${esm}/tests/kubeconfig/_helpers.js`);
const PLUGIN = join(esm, "tests/kubeconfig/fixtures/exec_plugin.mjs");

/** Loads `cluster` + `user` as kubeconfig text, lists once; returns the server's log entry. */
async function listWith(server, cluster, user, { via = "bun-tls" } = {}) {
  server.seen.length = 0;
  const conn = await loadKubeConfig({
    text: toYaml(kubeconfig({ server: server.url, ...cluster }, user)),
    env: {},
  });
  expect(conn.via === via, `connection via ${conn.via}, want ${via}`);
  const n = await listOnce(conn);
  expect(n === 0, `listed ${n} items`);
  expect(server.seen.length === 1, `${server.seen.length} requests seen`);
  return server.seen[0];
}

/** The list must fail with a KubeNetworkError; returns its message. */
async function failsWith(server, cluster, user) {
  server.seen.length = 0;
  const conn = await loadKubeConfig({
    text: toYaml(kubeconfig({ server: server.url, ...cluster }, user)),
    env: {},
  });
  const err = await listOnce(conn).then(() => undefined, (e) => e);
  expect(err !== undefined, "the request succeeded");
  expect(err instanceof KubeNetworkError, `${err?.name}: ${err?.message}, want a KubeNetworkError`);
  expect(server.seen.length === 0, "the server answered a request");
  return err.message.split("\n")[0];
}

export async function kubeconfigChecks() {
  const pki = await createPki();
  const servers = [];
  try {
    const server = await startTlsServer(pki);
    servers.push(server);
    const named = await startTlsServer(pki, { cert: pki.namedServer });
    servers.push(named);
    const caData = { "certificate-authority-data": b64(pki.ca.cert) };
    const only = (...creds) => {
      server.accept.clear();
      for (const c of creds) server.accept.add(c);
    };

    await check("kubeconfig: CA + bearer token", async () => {
      only("Bearer tok-one");
      const seen = await listWith(server, caData, { token: "tok-one" });
      expect(seen.authorization === "Bearer tok-one", `authorization ${seen.authorization}`);
      expect(seen.path === "/api/v1/namespaces/default/configmaps", `path ${seen.path}`);
    });

    await check("kubeconfig: CA file + client certificate files", async () => {
      only("Bearer nobody");
      const seen = await listWith(
        server,
        { "certificate-authority": pki.ca.certPath },
        { "client-certificate": pki.client.certPath, "client-key": pki.client.keyPath },
      );
      expect(seen.clientCn === "alice", `client CN ${seen.clientCn}`);
      expect(seen.authorization === undefined, "an Authorization header was sent");
    });

    await check("kubeconfig: client certificate from -data fields", async () => {
      only("Bearer nobody");
      const seen = await listWith(server, caData, {
        "client-certificate-data": b64(pki.client.cert),
        "client-key-data": b64(pki.client.key),
      });
      expect(seen.clientCn === "alice", `client CN ${seen.clientCn}`);
    });

    await check("kubeconfig: tokenFile", async () => {
      const tokenFile = join(pki.dir, "token");
      await writeFile(tokenFile, "file-tok\n");
      only("Bearer file-tok");
      const seen = await listWith(server, caData, { tokenFile });
      expect(seen.authorization === "Bearer file-tok", `authorization ${seen.authorization}`);
    });

    await check("kubeconfig: basic auth", async () => {
      const basic = `Basic ${b64("admin:pa:ss")}`;
      only(basic);
      const seen = await listWith(server, caData, { username: "admin", password: "pa:ss" });
      expect(seen.authorization === basic, `authorization ${seen.authorization}`);
    });

    await check("kubeconfig: exec plugin (run by this Bun binary)", async () => {
      await writeFile(join(pki.dir, "exec-token"), "exec-tok");
      only("Bearer exec-tok");
      const exec = {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: [PLUGIN],
        interactiveMode: "Never",
        env: [{ name: "PLUGIN_TOKEN_FILE", value: join(pki.dir, "exec-token") }],
      };
      const seen = await listWith(server, caData, { exec });
      expect(seen.authorization === "Bearer exec-tok", `authorization ${seen.authorization}`);
    });

    await check("kubeconfig: insecure-skip-tls-verify (no CA)", async () => {
      only();
      await listWith(server, { "insecure-skip-tls-verify": true }, { token: "t" });
    });

    await check("kubeconfig: tls-server-name verifies against that name", async () => {
      only();
      await listWith(named, { ...caData, "tls-server-name": "kube.test" }, { token: "t" });
    });

    await check(
      "kubeconfig: no CA (self-signed, untrusted) fails with KubeNetworkError",
      async () => {
        only();
        return await failsWith(server, {}, { token: "t" });
      },
    );

    await check("kubeconfig: wrong CA fails with KubeNetworkError", async () => {
      only();
      return await failsWith(server, { "certificate-authority-data": b64(pki.otherCa.cert) }, {
        token: "t",
      });
    });

    await check(
      "kubeconfig: wrong server name (no tls-server-name) fails with KubeNetworkError",
      async () => {
        only();
        return await failsWith(named, caData, { token: "t" });
      },
    );
  } finally {
    for (const s of servers) await s.close();
    await pki.cleanup();
  }
}
