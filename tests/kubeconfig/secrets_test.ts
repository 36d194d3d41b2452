/**
 * Feeds every secret a kubeconfig can hold through every failure path and
 * searches all output (error messages, stacks, causes, `inspect` and
 * `JSON.stringify` of configs, connections and clients, console output) for it.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { loadKubeConfig, readKubeConfig } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { pemBody } from "./_pki.ts";
import { b64, kubeconfig, withTls, writeConfig } from "./_helpers.ts";

const PLUGIN = fileURLToPath(new URL("./fixtures/exec_plugin.mjs", import.meta.url));
const TOKEN = "tok-SECRET-7f3a9c";
const PASSWORD = "pw-SECRET-51b2";
const FILE_TOKEN = "filetok-SECRET-0d9e";
const EXEC_TOKEN = "exectok-SECRET-c4e1";

/** Everything a user could see of `values`. */
function render(values: unknown[]): string {
  const parts: string[] = [];
  for (const v of values) {
    parts.push(inspect(v, { depth: 10, showHidden: false }), String(v));
    try {
      parts.push(JSON.stringify(v) ?? "");
    } catch { /* circular */ }
    if (v instanceof Error) parts.push(v.stack ?? "", inspect(v.cause, { depth: 10 }));
  }
  return parts.join("\n");
}

function assertClean(text: string, secrets: string[]): void {
  for (const s of secrets) {
    assert.ok(!text.includes(s), `a secret leaked into:\n${text.slice(0, 2000)}`);
  }
}

async function captureConsole<T>(fn: () => Promise<T>): Promise<{ result: T; output: string }> {
  const methods = ["log", "error", "warn", "info", "debug", "trace"] as const;
  const saved = methods.map((m) => console[m]);
  const lines: string[] = [];
  for (const m of methods) {
    console[m] = (...args: unknown[]) => lines.push(args.map((a) => inspect(a)).join(" "));
  }
  try {
    return { result: await fn(), output: lines.join("\n") };
  } finally {
    methods.forEach((m, i) => (console[m] = saved[i]));
  }
}

test("no token, password, key, certificate body or exec token appears in any failure output", () =>
  withTls(async (pki, server) => {
    const secrets = [
      TOKEN,
      PASSWORD,
      FILE_TOKEN,
      EXEC_TOKEN,
      ...pemBody(pki.client.key),
      ...pemBody(pki.client.cert),
    ];
    const seen: unknown[] = [];
    const expectFailure = async (p: Promise<unknown>) =>
      seen.push(await p.then(() => assert.fail("expected a failure"), (e) => e));
    await writeFile(join(pki.dir, "token"), FILE_TOKEN);
    const cluster = { server: server.url, "certificate-authority-data": b64(pki.ca.cert) };
    const certUser = {
      "client-certificate-data": b64(pki.client.cert),
      "client-key-data": b64(pki.client.key),
    };

    const { output } = await captureConsole(async () => {
      // bad YAML after the secrets
      const badYaml = await writeConfig(
        pki.dir,
        "bad-yaml",
        `users:\n- name: u\n  user: {token: ${TOKEN}, password: ${PASSWORD}\n  oops: [\n`,
      );
      await expectFailure(readKubeConfig({ path: badYaml, env: {} }));
      // a bad field next to secrets
      await expectFailure(
        loadKubeConfig({
          path: await writeConfig(
            pki.dir,
            "bad-field",
            kubeconfig({ ...cluster, "tls-server-name": 3 }, { token: TOKEN }),
          ),
          env: {},
        }),
      );
      // a bad file referenced, a certificate that does not parse, a key without a certificate
      await expectFailure(
        loadKubeConfig({
          path: await writeConfig(
            pki.dir,
            "bad-file",
            kubeconfig(cluster, {
              ...certUser,
              "client-certificate-data": undefined,
              "client-certificate": "nope.crt",
            }),
          ),
          env: {},
        }),
      );
      await expectFailure(
        loadKubeConfig({
          path: await writeConfig(
            pki.dir,
            "bad-cert",
            kubeconfig(cluster, { ...certUser, "client-certificate-data": b64(pki.client.key) }),
          ),
          env: {},
        }),
      );
      await expectFailure(
        loadKubeConfig({
          path: await writeConfig(
            pki.dir,
            "bad-key",
            kubeconfig(cluster, { ...certUser, "client-key-data": b64(pki.client.cert) }),
          ),
          env: {},
        }),
      );
      // conflicting credentials
      await expectFailure(
        loadKubeConfig({
          path: await writeConfig(
            pki.dir,
            "conflict",
            kubeconfig(cluster, { token: TOKEN, username: "u", password: PASSWORD }),
          ),
          env: {},
        }),
      );
      // failing exec plugins: garbage holding the token, the wrong apiVersion, an exit code
      for (
        const env of [
          { PLUGIN_GARBAGE: `not json ${EXEC_TOKEN}` },
          {
            PLUGIN_GARBAGE: JSON.stringify({
              apiVersion: "v0",
              kind: "ExecCredential",
              status: { token: EXEC_TOKEN },
            }),
          },
          { PLUGIN_FAIL: "1" },
        ]
      ) {
        const execEntry = {
          apiVersion: "client.authentication.k8s.io/v1beta1",
          command: "node",
          args: [PLUGIN],
          env: Object.entries(env).map(([name, value]) => ({ name, value })),
        };
        const conn = await loadKubeConfig({
          path: await writeConfig(pki.dir, "exec", kubeconfig(cluster, { exec: execEntry })),
          env: {},
          execStderr: "ignore",
        });
        seen.push(conn, conn.client);
        await expectFailure(conn.client.request("/api"));
        await conn.close();
      }
      // 401 with a token, a token file, basic auth, and the exec token
      await writeFile(join(pki.dir, "exec-token"), EXEC_TOKEN);
      const users = [
        { token: TOKEN },
        { tokenFile: "token" },
        { username: "admin", password: PASSWORD },
        {
          exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: "node",
            args: [PLUGIN],
            interactiveMode: "Never",
            env: [{ name: "PLUGIN_TOKEN_FILE", value: join(pki.dir, "exec-token") }],
          },
        },
      ];
      for (const user of users) {
        const path = await writeConfig(pki.dir, "401", kubeconfig(cluster, user));
        const config = await readKubeConfig({ path, env: {} });
        const conn = await loadKubeConfig({ config, env: {} });
        seen.push(config, conn, conn.client);
        await expectFailure(conn.client.request("/api/v1/configmaps"));
        console.log("connection", conn, "config", config, "client", conn.client);
        await conn.close();
      }
      // TLS failure while presenting the client certificate (the server's CA is not trusted)
      const tlsFail = await writeConfig(
        pki.dir,
        "tls",
        kubeconfig({ server: server.url, "certificate-authority-data": b64(pki.otherCa.cert) }, {
          ...certUser,
        }),
      );
      const conn = await loadKubeConfig({ path: tlsFail, env: {} });
      seen.push(conn, conn.client);
      await expectFailure(conn.client.request("/api"));
      await conn.close();
    });
    assert.equal(seen.filter((e) => e instanceof Error).length, 14);
    assertClean(render(seen), secrets);
    assertClean(output, secrets);
  }, { accept: ["Bearer only-this"] }));
