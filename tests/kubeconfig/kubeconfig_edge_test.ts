import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  connectKubeConfig,
  KubeConfigError,
  KubeConnection,
  parseKubeConfig,
  TlsUnsupportedError,
} from "../../kubeconfig_edge.ts";
import * as full from "../../kubeconfig.ts";
import { Indexer, metaNamespaceKeyFunc, Reflector, resourceListerWatcher } from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { b64, kubeconfig } from "./_helpers.ts";
import { createPki } from "./_pki.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

test("the edge entry point's module graph imports no node:* module, no undici and no file of the Node loaders", async () => {
  const seen = new Set<string>();
  const bare = new Set<string>();
  // The sources on Deno; on Node the npm build's JavaScript (npm: specifiers rewritten to bare names).
  const ext = existsSync(join(ROOT, "kubeconfig_edge.ts")) ? "ts" : "js";
  const todo = [join(ROOT, `kubeconfig_edge.${ext}`)];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    // Code only: JSDoc examples import the testkit and node:assert.
    const code = (await readFile(file, "utf8")).replace(/\/\*[\s\S]*?\*\//g, "").replace(
      /^\s*\/\/.*$/gm,
      "",
    );
    const specifiers = [
      ...code.matchAll(
        /(?:^|[;}\n])\s*(?:import|export)\s+(?:type\s+)?(?:[\w$*{},\s]+?\s+from\s*)?["']([^"']+)["']/g,
      ),
      ...code.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ].map((m) => m[1]);
    for (const s of specifiers) {
      if (s.startsWith(".")) todo.push(join(dirname(file), s));
      else bare.add(s);
    }
  }
  assert.deepEqual([...bare], [ext === "ts" ? "npm:yaml@^2" : "yaml"]);
  const files = [...seen].map((f) => f.slice(ROOT.length));
  assert.ok(files.some((f) => f.includes("_schema.")), `the walk found the parser: ${files}`);
  for (
    const nodeOnly of [
      "_node_fs",
      "/tls_fetch.",
      "exec_credential",
      "token_file",
      "in_cluster",
      "read_kube",
    ]
  ) {
    const reached = files.filter((f) => f.includes(nodeOnly) && !f.includes("_web_tls"));
    assert.deepEqual(reached, [], `${nodeOnly} reached`);
  }
});

test("connectKubeConfig connects with a kubeconfig's text and its inline token, and a Reflector syncs", async () => {
  const server = await FakeApiServer.start({ tokens: ["edge-token"] });
  try {
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "apps" },
    });
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "b", namespace: "other" },
    });
    const text = JSON.stringify(
      kubeconfig({ server: server.url }, { token: "edge-token" }, { namespace: "apps" }),
    );
    const conn = await connectKubeConfig(text, { userAgent: "edge-test" });
    try {
      assert.equal(conn.namespace, "apps");
      assert.equal(conn.via, "native");
      const lw = resourceListerWatcher(conn.client, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: conn.namespace,
      });
      const store = new Indexer(metaNamespaceKeyFunc, {});
      const ac = new AbortController();
      const reflector = new Reflector(lw, store, {
        name: "cm",
        expectedKind: "ConfigMap",
        useStreamingList: false,
      });
      const done = reflector.run({ signal: ac.signal });
      await reflector.synced;
      assert.deepEqual(store.listKeys(), ["apps/a"]);
      ac.abort();
      await done;
      const list = server.requests.find((r) => r.verb === "list")!;
      assert.equal(list.authorization, "Bearer edge-token");
    } finally {
      await conn.close();
    }
  } finally {
    await server.close();
  }
});

test("connectKubeConfig sends basic auth and takes an already parsed KubeConfig and a context", async () => {
  const server = await FakeApiServer.start({});
  try {
    const config = parseKubeConfig(
      JSON.stringify(kubeconfig({ server: server.url }, { username: "ann", password: "pw" })),
      { name: "secret kc" },
    );
    const conn = await connectKubeConfig(config, { context: config.contextNames()[0] });
    try {
      await (await conn.client.request("/api/v1/namespaces/default/configmaps")).body?.cancel();
      assert.equal(server.requests.at(-1)!.authorization, `Basic ${b64("ann:pw")}`);
    } finally {
      await conn.close();
    }
  } finally {
    await server.close();
  }
});

test("the edge entry point names the field of a file, token file or exec plugin it cannot use", async () => {
  const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
    [
      { "certificate-authority": "ca.crt" },
      { token: "t" },
      "clusters[test-cluster].cluster.certificate-authority",
    ],
    [
      {},
      { "client-certificate": "c.crt", "client-key": "c.key" },
      "users[test-user].user.client-certificate",
    ],
    [{}, { tokenFile: "/var/run/token" }, "users[test-user].user.tokenFile"],
    [
      {},
      { exec: { apiVersion: "client.authentication.k8s.io/v1beta1", command: "aws" } },
      "users[test-user].user.exec",
    ],
  ];
  for (const [cluster, user, field] of cases) {
    const text = JSON.stringify(
      kubeconfig({ server: "https://k8s.example.com", ...cluster }, user),
    );
    const err = await connectKubeConfig(text, { name: "env.KUBECONFIG" }).catch((e) => e);
    assert.ok(err instanceof KubeConfigError, `${field}: ${err}`);
    assert.equal(err.field, field);
    assert.equal(err.file, "env.KUBECONFIG");
    assert.match(err.message, /kube-reflector\/kubeconfig/);
    // Both entry points share the classes.
    assert.ok(err instanceof full.KubeConfigError);
  }
  assert.throws(
    () => parseKubeConfig("a: [", { name: "env.KUBECONFIG" }),
    /env.KUBECONFIG: malformed YAML/,
  );
});

test("custom TLS through the edge entry point works where the runtime's fetch can do it, and says where to go on Node", async () => {
  const pki = await createPki();
  const text = JSON.stringify(
    kubeconfig({ server: "https://127.0.0.1:1", "certificate-authority-data": b64(pki.ca.cert) }, {
      token: "t",
    }),
  );
  if (runtime === "deno") {
    const conn = await connectKubeConfig(text);
    assert.equal(conn.via, "deno-http-client");
    await conn.close();
  } else {
    const err = await connectKubeConfig(text).catch((e) => e);
    assert.ok(err instanceof TlsUnsupportedError, String(err));
    assert.equal(err.runtime, "node");
    assert.deepEqual(err.needs, ["clusters[test-cluster].cluster.certificate-authority-data"]);
    assert.match(err.message, /undici package, which only kube-reflector\/kubeconfig loads/);
  }
  // KubeConnection.open takes the TLS fetch to use (kubeconfig.ts passes createTlsFetch).
  const conn = await KubeConnection.open({
    server: "https://127.0.0.1:1",
    namespace: "default",
    tls: { ca: pki.ca.cert },
    createFetch: (tls) => full.createTlsFetch(tls),
  });
  assert.equal(conn.via, runtime === "deno" ? "deno-http-client" : "undici");
  await conn.close();
});
