import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";
import { discover, KubeClient, type KubeObject } from "../../mod.ts";
import { runGet } from "../../src/cli/get.ts";
import type { ResolveResource } from "../../src/cli/_target.ts";
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

test("get RESOURCE NAME reads the object with one GET: it needs only the get verb (a list would be refused)", async () => {
  await withServer(async (server) => {
    // a Role with resourceNames allows get of one object, never list
    server.inject({
      verb: "list",
      resource: "configmaps",
      times: Infinity,
      fault: { kind: "status", code: 403 },
    });
    const verbs: string[] = [];
    const env = fakeEnv(["cm", "a", "-o", "name", "--server", server.url]);
    const code = await runGet(env, {
      resolve: async (client, name, options) => {
        verbs.push(options.verb);
        return await (await discover(client)).resolve(name, options);
      },
    });
    assert.equal(env.err, "");
    assert.equal(code, 0);
    assert.equal(env.out, "configmap/a\n");
    assert.deepEqual(verbs, ["get"], "the resource must serve get (not list)");
    const reads = server.requests.filter((r) => r.path.includes("/configmaps"));
    assert.deepEqual(reads.map((r) => `${r.verb} ${r.path}`), [
      "get /api/v1/namespaces/default/configmaps/a",
    ]);
  });
});

test("get RESOURCE NAME -o table GETs a Table (or prints NAME and AGE from a plain object); a 404 is not found, exit 1", async () => {
  await withServer(async (server, { a }) => {
    const front = await startTableFront(server.url);
    try {
      const env = fakeEnv(["cm", "a", "-o", "wide", "--server", front.url]);
      assert.equal(await runGet(env), 0, env.err);
      assert.equal(env.out, "NAME   DATA   AGE   LABELS\na      1      5m    app=web\n");
      assert.equal(front.tables, 1);
    } finally {
      await front.close();
    }
    const env = fakeEnv(["cm", "a", "--server", server.url]); // the test kit: no Tables
    assert.equal(await runGet(env, { now: () => created(a) + 5 * MIN }), 0, env.err);
    assert.equal(env.out, "NAME   AGE\na      5m\n");
    const gets = server.requests.filter((r) =>
      r.path === "/api/v1/namespaces/default/configmaps/a"
    );
    assert.ok(gets.every((r) => r.verb === "get"));

    const missing = fakeEnv(["deploy", "nope", "-n", "prod", "-o", "json", "--server", server.url]);
    assert.equal(await runGet(missing), 1);
    assert.equal(missing.out, "");
    assert.equal(
      missing.err,
      'kube-reflector: deployments.apps "nope" not found in prod namespace\n',
    );
  });
});

test("get NAME -A is a usage error for a namespaced resource, as in kubectl (one name may be many objects)", async () => {
  await withServer(async (server) => {
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "kube-system" },
    });
    const env = fakeEnv(["cm", "a", "-A", "-o", "json", "--server", server.url]);
    assert.equal(await runGet(env), 2);
    assert.equal(env.out, "");
    assert.match(
      env.err,
      /^kube-reflector: a resource cannot be retrieved by name across all namespaces\nRun 'kube-reflector get --help' for usage\.\n$/,
    );
    // a cluster-scoped resource has no namespaces: -A is moot, as in kubectl
    server.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "prod" } });
    const ns = fakeEnv(["ns", "prod", "-A", "-o", "name", "--server", server.url]);
    assert.equal(await runGet(ns), 0, ns.err);
    assert.equal(ns.out, "namespace/prod\n");
  });
});

test("get NAME with a selector is a usage error, as in kubectl (a GET takes none)", async () => {
  await withServer(async (server) => {
    for (const flag of [["-l", "app=web"], ["--field-selector", "metadata.namespace=default"]]) {
      const env = fakeEnv(["cm", "a", ...flag, "--server", server.url]);
      assert.equal(await runGet(env), 2);
      assert.match(
        env.err,
        /^kube-reflector: name cannot be provided when a selector is specified\n/,
      );
    }
  });
});

test("get of a name unknown while a group version's discovery failed says which, and exits 1 (not 3: maybe no typo)", async () => {
  const server = await FakeApiServer.start({ discovery: "legacy" });
  try {
    const down = "/apis/coordination.k8s.io/v1"; // an aggregated API that is down
    const client = new KubeClient({
      server: server.url,
      fetch: (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        if (url.pathname !== down) return fetch(input, init);
        const status = {
          kind: "Status",
          status: "Failure",
          message: "service unavailable",
          code: 503,
        };
        return Promise.resolve(
          new Response(JSON.stringify(status), {
            status: 503,
            headers: { "content-type": "application/json" },
          }),
        );
      },
    });
    const resolve: ResolveResource = async (_client, name, options) =>
      await (await discover(client)).resolve(name, options);
    let env = fakeEnv(["leases", "-A", "--server", server.url]);
    assert.equal(await runGet(env, { resolve }), 1);
    assert.match(
      env.err,
      /^kube-reflector: the server doesn't have a resource type "leases" \(discovery failed for coordination\.k8s\.io\/v1: .*service unavailable.*\)\n$/,
    );
    // a name known elsewhere still resolves; a typo's code stays 3 when discovery was complete
    env = fakeEnv(["cm", "-A", "-o", "name", "--server", server.url]);
    assert.equal(await runGet(env, { resolve }), 0, env.err);
    env = fakeEnv(["leasez", "-A", "--server", server.url]);
    assert.equal(await runGet(env), 3);
    assert.doesNotMatch(env.err, /discovery failed/);
  } finally {
    await server.close();
  }
});
