import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { KubeConfigError, loadKubeConfig, readKubeConfig } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { b64, kubeconfig, writeConfig } from "./_helpers.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-cfg-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function configError(p: Promise<unknown>): Promise<KubeConfigError> {
  const err = await p.then(() => undefined, (e) => e);
  assert.ok(err instanceof KubeConfigError, `expected a KubeConfigError, got ${err}`);
  return err;
}

const CERT_PEM =
  "-----BEGIN CERTIFICATE-----\nMIIBnotreallyacertificate\n-----END CERTIFICATE-----\n";

test("a missing kubeconfig file is named in the error", () =>
  withDir(async (dir) => {
    const err = await configError(readKubeConfig({ path: join(dir, "nope.yaml"), env: {} }));
    assert.equal(err.file, join(dir, "nope.yaml"));
    assert.match(err.message, /no such file/);
  }));

test("KUBECONFIG listing only missing files names the variable", () =>
  withDir(async (dir) => {
    const err = await configError(readKubeConfig({ env: { KUBECONFIG: `${dir}/a:${dir}/b` } }));
    assert.equal(err.field, "KUBECONFIG");
  }));

test("malformed YAML names the file and the position, not the content", () =>
  withDir(async (dir) => {
    const path = await writeConfig(
      dir,
      "bad.yaml",
      "clusters:\n  - name: c\n    cluster: {server: [\ntoken: s3cr3t-in-yaml\n",
    );
    const err = await configError(readKubeConfig({ path, env: {} }));
    assert.equal(err.file, path);
    assert.match(err.message, /malformed YAML at line \d+, column \d+/);
    assert.ok(!err.message.includes("s3cr3t-in-yaml"));
  }));

test("a field of the wrong type is named", () =>
  withDir(async (dir) => {
    const path = await writeConfig(
      dir,
      "config",
      kubeconfig({ server: "https://x", "insecure-skip-tls-verify": "yes" }, {}),
    );
    const err = await configError(readKubeConfig({ path, env: {} }));
    assert.equal(err.field, "clusters[test-cluster].cluster.insecure-skip-tls-verify");
  }));

test("an unknown context names the context field", () =>
  withDir(async (dir) => {
    const path = await writeConfig(dir, "config", kubeconfig({ server: "https://x" }, {}));
    const err = await configError(loadKubeConfig({ path, env: {}, context: "prod" }));
    assert.equal(err.field, "context");
    assert.match(err.message, /unknown context "prod"/);
    const dangling = await writeConfig(dir, "dangling", {
      "current-context": "gone",
      contexts: [],
    });
    const err2 = await configError(loadKubeConfig({ path: dangling, env: {} }));
    assert.equal(err2.field, "current-context");
    assert.equal(err2.file, dangling);
  }));

test("an unknown cluster or user names the context's field", () =>
  withDir(async (dir) => {
    const path = await writeConfig(dir, "config", {
      "current-context": "c",
      contexts: [{ name: "c", context: { cluster: "nope", user: "u" } }],
    });
    const err = await configError(loadKubeConfig({ path, env: {} }));
    assert.equal(err.field, "contexts[c].context.cluster");
  }));

test("a certificate that does not parse names the file and field", () =>
  withDir(async (dir) => {
    const garbage = await writeConfig(
      dir,
      "garbage",
      kubeconfig({ server: "https://x", "certificate-authority-data": b64(CERT_PEM) }, {}),
    );
    const err = await configError(loadKubeConfig({ path: garbage, env: {} }));
    assert.equal(err.file, garbage);
    assert.equal(err.field, "clusters[test-cluster].cluster.certificate-authority-data");
    assert.match(err.message, /does not parse/);

    const notB64 = await writeConfig(
      dir,
      "notb64",
      kubeconfig({ server: "https://x", "certificate-authority-data": "%%%" }, {}),
    );
    assert.match(
      (await configError(loadKubeConfig({ path: notB64, env: {} }))).message,
      /not valid base64/,
    );

    const noPem = await writeConfig(
      dir,
      "nopem",
      kubeconfig({ server: "https://x" }, {
        "client-certificate-data": b64("hello"),
        "client-key-data": b64("world"),
      }),
    );
    const err3 = await configError(loadKubeConfig({ path: noPem, env: {} }));
    assert.equal(err3.field, "users[test-user].user.client-certificate-data");
  }));

test("a missing certificate file names the kubeconfig and the field", () =>
  withDir(async (dir) => {
    const path = await writeConfig(
      dir,
      "config",
      kubeconfig({ server: "https://x", "certificate-authority": "missing-ca.crt" }, {}),
    );
    const err = await configError(loadKubeConfig({ path, env: {} }));
    assert.equal(err.file, path);
    assert.equal(err.field, "clusters[test-cluster].cluster.certificate-authority");
    assert.ok(err.message.includes(join(dir, "missing-ca.crt")));
  }));

test("a client certificate without its key is refused", () =>
  withDir(async (dir) => {
    const path = await writeConfig(
      dir,
      "config",
      kubeconfig({ server: "https://x" }, { "client-certificate-data": b64(CERT_PEM) }),
    );
    const err = await configError(loadKubeConfig({ path, env: {} }));
    assert.equal(err.field, "users[test-user].user.client-key");
  }));

test("a missing server and conflicting credentials are refused", () =>
  withDir(async (dir) => {
    const noServer = await writeConfig(dir, "a", kubeconfig({}, {}));
    assert.equal(
      (await configError(loadKubeConfig({ path: noServer, env: {} }))).field,
      "clusters[test-cluster].cluster.server",
    );
    const both = await writeConfig(
      dir,
      "b",
      kubeconfig({ server: "https://x" }, { token: "t", username: "u", password: "p" }),
    );
    assert.match(
      (await configError(loadKubeConfig({ path: both, env: {} }))).message,
      /set only one of/,
    );
  }));

test("a KubeConfig shows names, never credentials", () =>
  withDir(async (dir) => {
    const path = await writeConfig(
      dir,
      "config",
      kubeconfig({ server: "https://x" }, { token: "tok-hidden", password: "pw-hidden" }),
    );
    const config = await readKubeConfig({ path, env: {} });
    assert.deepEqual(config.contextNames(), ["test"]);
    assert.equal(config.currentContext, "test");
    for (const shown of [JSON.stringify(config), inspect(config), String(config)]) {
      assert.ok(!shown.includes("tok-hidden") && !shown.includes("pw-hidden"), shown);
    }
  }));
