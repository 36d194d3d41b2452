import assert from "node:assert/strict";
import { access, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { execCredentialProvider, KubeConfigError, loadKubeConfig } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { kubeconfig, withTls, writeConfig } from "./_helpers.ts";

const PLUGIN = fileURLToPath(new URL("./fixtures/exec_plugin.mjs", import.meta.url));

function exec(
  dir: string,
  env: Record<string, string> = {},
  apiVersion = "client.authentication.k8s.io/v1",
) {
  return {
    apiVersion,
    command: "node",
    args: [PLUGIN],
    interactiveMode: "Never",
    provideClusterInfo: true,
    env: Object.entries({
      PLUGIN_TOKEN_FILE: join(dir, "token"),
      PLUGIN_COUNT_FILE: join(dir, "runs"),
      ...env,
    })
      .map(([name, value]) => ({ name, value })),
  };
}

async function runs(
  dir: string,
): Promise<
  Array<{ apiVersion: string; spec: { interactive: boolean; cluster?: { server: string } } }>
> {
  const text = await readFile(join(dir, "runs"), "utf8").catch(() => "");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

for (
  const apiVersion of ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]
) {
  test(`an exec plugin (${apiVersion.split("/")[1]}) supplies the token, cached, re-run after a 401`, () =>
    withTls(async (pki, server) => {
      await writeFile(join(pki.dir, "token"), "exec-tok-1");
      const path = await writeConfig(
        pki.dir,
        "config",
        kubeconfig(
          { server: server.url, "certificate-authority": "ca.crt" },
          { exec: exec(pki.dir, {}, apiVersion) },
        ),
      );
      const conn = await loadKubeConfig({ path, env: {} });
      try {
        const get = () =>
          conn.client.request("/api/v1/namespaces/default/configmaps").then((r) =>
            r.body?.cancel()
          );
        await Promise.all([get(), get(), get()]);
        await get();
        assert.equal((await runs(pki.dir)).length, 1, "one run, shared and cached");
        const info = (await runs(pki.dir))[0];
        assert.equal(info.apiVersion, apiVersion);
        assert.equal(info.spec.interactive, false);
        assert.equal(info.spec.cluster?.server, server.url);

        await writeFile(join(pki.dir, "token"), "exec-tok-2");
        server.accept.clear();
        server.accept.add("Bearer exec-tok-2");
        await get();
        assert.equal((await runs(pki.dir)).length, 2, "re-run after the 401");
        assert.equal(server.seen.at(-1)?.authorization, "Bearer exec-tok-2");
      } finally {
        await conn.close();
      }
    }, { accept: ["Bearer exec-tok-1"] }));
}

test("an exec credential is re-run once its expirationTimestamp has passed", () =>
  withTls(async (pki) => {
    await writeFile(join(pki.dir, "token"), "short-lived");
    let now = Date.now();
    const provider = execCredentialProvider(exec(pki.dir, { PLUGIN_EXPIRES_MS: "60000" }), {
      now: () => now,
    });
    assert.equal(await provider({ refresh: false }), "short-lived");
    assert.equal(await provider({ refresh: false }), "short-lived");
    assert.equal((await runs(pki.dir)).length, 1);
    now += 61_000;
    await provider({ refresh: false });
    assert.equal((await runs(pki.dir)).length, 2);
  }));

test("a failing, missing or garbled exec plugin gives a KubeConfigError naming the field", () =>
  withTls(async (pki) => {
    const where = { file: "/k/config", field: "users[u].user.exec", stderr: "ignore" as const };
    const failing = execCredentialProvider(exec(pki.dir, { PLUGIN_FAIL: "3" }), where);
    const e1 = await Promise.resolve(failing({ refresh: false })).catch((e) => e);
    assert.ok(e1 instanceof KubeConfigError);
    assert.equal(e1.field, "users[u].user.exec");
    assert.match(e1.message, /exited with code 3/);

    const missing = execCredentialProvider({
      ...exec(pki.dir),
      command: "no-such-plugin-xyz",
      installHint: "install it",
    }, where);
    assert.match(
      (await Promise.resolve(missing({ refresh: false })).catch((e) => e)).message,
      /not found; install it/,
    );

    const garbled = execCredentialProvider(exec(pki.dir, { PLUGIN_GARBAGE: "{not json" }), where);
    assert.match(
      (await Promise.resolve(garbled({ refresh: false })).catch((e) => e)).message,
      /no valid JSON/,
    );
  }));

test("exec entries that need interaction are refused", () => {
  assert.throws(
    () =>
      execCredentialProvider({
        apiVersion: "client.authentication.k8s.io/v1",
        command: "x",
        interactiveMode: "Always",
      }),
    KubeConfigError,
  );
  assert.throws(
    () => execCredentialProvider({ apiVersion: "client.authentication.k8s.io/v1", command: "x" }),
    /interactiveMode/,
  );
});

test("an aborted caller stops waiting at once while the shared plugin run completes for the others", () =>
  withTls(async (pki) => {
    await writeFile(join(pki.dir, "token"), "slow-token");
    const provider = execCredentialProvider(exec(pki.dir, { PLUGIN_DELAY_MS: "300" }));
    const ac = new AbortController();
    const aborted = Promise.resolve(provider({ refresh: false, signal: ac.signal }));
    const patient = Promise.resolve(provider({ refresh: false }));
    const reason = new Error("caller gave up");
    ac.abort(reason);
    await assert.rejects(aborted, (err) => err === reason);
    assert.equal(await patient, "slow-token");
    assert.equal((await runs(pki.dir)).length, 1);
  }));

test("an exec plugin that hangs (even with a child holding its stdout) fails at timeoutMs", async () => {
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-exec-"));
  const answered = join(dir, "answered"); // the plugin's last act, 2 s in
  try {
    const provider = execCredentialProvider(
      {
        apiVersion: "client.authentication.k8s.io/v1",
        command: "sh",
        args: ["-c", `sleep 2; touch '${answered}'; echo`],
        interactiveMode: "Never",
      },
      { timeoutMs: 300, field: "users[me].user.exec", stderr: "ignore" },
    );
    const err = await Promise.resolve(provider({ refresh: false })).catch((e) => e);
    assert.ok(err instanceof KubeConfigError, String(err));
    assert.match(err.message, /did not answer within 300 ms/);
    await assert.rejects(access(answered), "settled before the plugin would have answered");
    await new Promise((r) => setTimeout(r, 2_200)); // let the orphaned `sleep` end before the sanitizers look
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("an exec plugin's stderr can be handed to a function as text (and a throwing one is ignored)", () =>
  withTls(async (pki) => {
    await writeFile(join(pki.dir, "token"), "tok");
    const warning = "warning: token cache is stale ✓ 日本\nsecond line\n";
    const seen: string[] = [];
    const provider = execCredentialProvider(exec(pki.dir, { PLUGIN_STDERR: warning }), {
      stderr: (text) => seen.push(text),
    });
    assert.equal(await provider({ refresh: false }), "tok");
    assert.equal(seen.join(""), warning);

    const throwing = execCredentialProvider(exec(pki.dir, { PLUGIN_STDERR: warning }), {
      stderr: () => {
        throw new Error("logger down");
      },
    });
    assert.equal(await throwing({ refresh: false }), "tok");

    const failing = execCredentialProvider(
      exec(pki.dir, { PLUGIN_STDERR: "cannot reach the identity provider\n", PLUGIN_FAIL: "1" }),
      { stderr: (text) => seen.push(text) },
    );
    const err = await Promise.resolve(failing({ refresh: false })).catch((e) => e);
    assert.ok(err instanceof KubeConfigError);
    assert.ok(!err.message.includes("identity provider"), "stderr is never put in the error");
    assert.match(seen.join(""), /cannot reach the identity provider/);
  }));
