import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";
import type { KubeObject } from "../../mod.ts";
import { runGet } from "../../src/cli/get.ts";
import { fakeEnv } from "./_fake_env.ts";
import { startTableFront } from "./_table_front.ts";

const MIN = 60_000;

async function withServer(
  fn: (server: FakeApiServer, objects: Record<string, KubeObject>) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start();
  try {
    const objects = {
      a: server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a", namespace: "default", labels: { app: "web" } },
        data: { x: "1" },
      }),
      b: server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "bee-long-name", namespace: "default" },
      }),
      c: server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "c", namespace: "kube-system" },
      }),
      web: server.create({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "prod" },
      }),
    };
    await fn(server, objects);
  } finally {
    await server.close();
  }
}

const created = (o: KubeObject) => Date.parse(o.metadata.creationTimestamp!);

test("get -o table without a server Table prints NAME and AGE aligned, kubectl's way", async () => {
  await withServer(async (server, { a }) => {
    const env = fakeEnv(["configmaps", "--server", server.url]);
    const code = await runGet(env, { now: () => created(a) + 5 * MIN });
    assert.equal(env.err, "");
    assert.equal(code, 0);
    assert.equal(
      env.out,
      "NAME            AGE\n" +
        "a               5m\n" +
        "bee-long-name   5m\n",
    );
  });
});

test("get -A adds NAMESPACE; AGE in kubectl's units", async () => {
  await withServer(async (server, { a }) => {
    const env = fakeEnv(["cm", "-A", "--server", server.url]);
    const code = await runGet(env, { now: () => created(a) + 3 * 60 * MIN + 20 * MIN });
    assert.equal(code, 0);
    assert.equal(
      env.out,
      "NAMESPACE     NAME            AGE\n" +
        "default       a               3h20m\n" +
        "default       bee-long-name   3h20m\n" +
        "kube-system   c               3h20m\n",
    );
  });
});

test("get -o name, ndjson and json print kubectl's forms", async () => {
  await withServer(async (server, objects) => {
    let env = fakeEnv(["deploy", "-A", "-o", "name", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    assert.equal(env.out, "deployment.apps/web\n");

    env = fakeEnv(["configmap", "-o=name", "-l", "app=web", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    assert.equal(env.out, "configmap/a\n");

    env = fakeEnv(["Deployment.apps", "-n", "prod", "-o", "ndjson", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    const w = objects.web.metadata;
    assert.equal(
      env.out,
      `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"prod",` +
        `"uid":"${w.uid}","resourceVersion":"${w.resourceVersion}","creationTimestamp":"${w.creationTimestamp}"}}\n`,
    );

    env = fakeEnv(["cm", "--field-selector", "metadata.name=a", "-ojson", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    const a = objects.a;
    assert.equal(
      env.out,
      `{
    "apiVersion": "v1",
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    },
    "items": [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "a",
                "namespace": "default",
                "uid": "${a.metadata.uid}",
                "resourceVersion": "${a.metadata.resourceVersion}",
                "creationTimestamp": "${a.metadata.creationTimestamp}",
                "labels": {
                    "app": "web"
                }
            },
            "data": {
                "x": "1"
            }
        }
    ]
}
`,
    );
  });
});

test("get RESOURCE NAME prints that object (json: the object itself); a missing one exits 1", async () => {
  await withServer(async (server, { a }) => {
    let env = fakeEnv(["cm", "a", "-o", "json", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    assert.deepEqual(JSON.parse(env.out), a);

    env = fakeEnv(["cm", "nope", "--server", server.url]);
    assert.equal(await runGet(env), 1);
    assert.equal(env.out, "");
    assert.equal(env.err, 'kube-reflector: configmaps "nope" not found in default namespace\n');
  });
});

test("get of nothing says so on stderr and exits 0", async () => {
  await withServer(async (server) => {
    const env = fakeEnv(["cm", "-n", "empty", "--server", server.url]);
    assert.equal(await runGet(env), 0);
    assert.equal(env.out, "");
    assert.equal(env.err, "No resources found in empty namespace.\n");
  });
});

test("get -o table prints the server's columns (priority 0; wide: all), asking for a Table", async () => {
  await withServer(async (server) => {
    const front = await startTableFront(server.url);
    try {
      let env = fakeEnv(["cm", "--server", front.url]);
      assert.equal(await runGet(env), 0);
      assert.equal(
        env.out,
        "NAME            DATA   AGE\n" +
          "a               1      5m\n" +
          "bee-long-name   0      5m\n",
      );
      env = fakeEnv(["cm", "-A", "-o", "wide", "--server", front.url]);
      assert.equal(await runGet(env), 0);
      assert.equal(
        env.out,
        "NAMESPACE     NAME            DATA   AGE   LABELS\n" +
          "default       a               1      5m    app=web\n" +
          "default       bee-long-name   0      5m    <none>\n" +
          "kube-system   c               0      5m    <none>\n",
      );
      assert.equal(front.tables, 2);
      const lists = server.requests.filter((r) => r.path.endsWith("/configmaps"));
      assert.ok(lists.every((r) => r.accept === "application/json"), "the front asked JSON");
    } finally {
      await front.close();
    }
  });
});

test("get pages the list and shows progress on stderr only when stderr is a terminal", async () => {
  await withServer(async (server) => {
    for (let i = 0; i < 7; i++) {
      server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `p${i}`, namespace: "paged" },
      });
    }
    let env = fakeEnv(["cm", "-n", "paged", "-o", "name", "--server", server.url], {
      stderrIsTerminal: true,
    });
    assert.equal(await runGet(env, { pageSize: 3 }), 0);
    assert.equal(env.out.split("\n").length - 1, 7);
    assert.match(env.err, /listed 3 of ~7 configmaps/);
    assert.match(env.err, /listed 6 of ~7 configmaps/);
    assert.ok(env.err.endsWith("\r\x1b[K"), "the progress line is cleared");
    const pages = server.requests.filter((r) => r.path.endsWith("/namespaces/paged/configmaps"));
    assert.equal(pages.length, 3);

    env = fakeEnv(["cm", "-n", "paged", "-o", "name", "--server", server.url]);
    assert.equal(await runGet(env, { pageSize: 3 }), 0);
    assert.equal(env.err, "");
  });
});

test("get takes the default namespace from the kubeconfig context", async () => {
  await withServer(async (server) => {
    const dir = await mkdtemp(join(tmpdir(), "cli-get-"));
    try {
      const path = join(dir, "config");
      await writeFile(
        path,
        `current-context: dev
clusters: [{ name: dev, cluster: { server: "${server.url}" } }]
users: [{ name: me, user: { token: t } }]
contexts: [{ name: dev, context: { cluster: dev, user: me, namespace: kube-system } }]
`,
      );
      let env = fakeEnv(["cm", "-o", "name", "--kubeconfig", path]);
      assert.equal(await runGet(env), 0, env.err);
      assert.equal(env.out, "configmap/c\n");
      // KUBECONFIG is read from the environment the command is given
      env = fakeEnv(["cm", "-o", "name", "-n", "default"], { vars: { KUBECONFIG: path } });
      assert.equal(await runGet(env), 0, env.err);
      assert.equal(env.out, "configmap/a\nconfigmap/bee-long-name\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
