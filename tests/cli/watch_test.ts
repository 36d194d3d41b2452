import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";
import type { KubeObject } from "../../mod.ts";
import { runWatch } from "../../src/cli/watch.ts";
import { fakeEnv, until } from "./_fake_env.ts";
import { startTableFront } from "./_table_front.ts";

const cm = (name: string, namespace = "default", data?: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  ...(data ? { data } : {}),
});

const lines = (text: string) => text.split("\n").length - 1;

test("watch -o table prints the header once and a row per change with its event; Ctrl-C exits 0", async () => {
  const server = await FakeApiServer.start();
  try {
    const a = server.create(cm("a"));
    const env = fakeEnv(["configmaps", "--server", server.url]);
    const created = Date.parse(a.metadata.creationTimestamp!);
    const done = runWatch(env, { now: () => created + 45_000 });
    await until(() => lines(env.out) === 2, "the first row");
    await server.waitForWatch();
    server.create(cm("bee-long-name"));
    await until(() => lines(env.out) === 3, "the add");
    server.update({ ...a, data: { k: "v" } });
    await until(() => lines(env.out) === 4, "the update");
    server.delete(a);
    await until(() => lines(env.out) === 5, "the delete");
    env.interrupt();
    assert.equal(await done, 0);
    assert.equal(
      env.out,
      "EVENT      NAME   AGE\n" +
        "ADDED      a      45s\n" +
        // widths only grow: a later, longer name pushes the columns after it (as kubectl's watch)
        "ADDED      bee-long-name   45s\n" +
        "MODIFIED   a               45s\n" +
        "DELETED    a               45s\n",
    );
    assert.equal(env.err, "");
  } finally {
    await server.close();
  }
});

test("watch -o ndjson, json and name print one entry per event", async () => {
  const server = await FakeApiServer.start();
  try {
    // a listed object has no apiVersion and kind: they are put back, first
    const { apiVersion, kind, ...rest } = server.create(cm("a", "default"));
    const a = { apiVersion, kind, ...rest } as KubeObject;
    for (
      const [format, expected] of [
        ["ndjson", (o: KubeObject, type: string) => JSON.stringify({ type, object: o }) + "\n"],
        ["json", (o: KubeObject) => JSON.stringify(o, null, 4) + "\n"],
        ["name", (o: KubeObject) => `configmap/${o.metadata.name}\n`],
      ] as const
    ) {
      const env = fakeEnv(["cm", "-A", "-o", format, "--server", server.url]);
      const done = runWatch(env);
      await until(() => env.out === expected(a, "ADDED"), `${format}: the add`);
      await server.waitForWatch();
      // a watch event's object as the server wrote it (the test kit: kind first)
      const b = server.create(cm(`b-${format}`, "other"));
      await until(() => env.out.length > expected(a, "ADDED").length, `${format}: the second`);
      env.interrupt();
      assert.equal(await done, 0);
      assert.equal(env.out, expected(a, "ADDED") + expected(b, "ADDED"));
      server.delete(b);
      await server.waitFor(() => server.openWatches === 0);
    }
  } finally {
    await server.close();
  }
});

test("watch with NAME, -l and -n follows only that selection", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create(cm("a"));
    server.create({
      ...cm("b"),
      metadata: { name: "b", namespace: "default", labels: { x: "1" } },
    });
    server.create(cm("a", "other"));
    let env = fakeEnv(["cm", "a", "-o", "name", "--server", server.url]);
    let done = runWatch(env);
    await until(() => env.out !== "", "the add");
    await server.waitForWatch();
    env.interrupt();
    assert.equal(await done, 0);
    assert.equal(env.out, "configmap/a\n");
    const [nameWatch] = server.requests.filter((r) =>
      r.query.get("watch") === "1" || r.query.get("watch") === "true"
    );
    assert.equal(nameWatch.query.get("fieldSelector"), "metadata.name=a");

    env = fakeEnv(["cm", "-l", "x=1", "-n", "default", "-o", "name", "--server", server.url]);
    done = runWatch(env);
    await until(() => env.out !== "", "the add");
    env.interrupt();
    assert.equal(await done, 0);
    assert.equal(env.out, "configmap/b\n");
  } finally {
    await server.close();
  }
});

test("watch -o wide uses the server's columns: the first rows from a Table list, a change's row by one GET", async () => {
  const server = await FakeApiServer.start();
  const front = await startTableFront(server.url);
  try {
    const a = server.create(cm("a", "default", { x: "1" }));
    const env = fakeEnv(["cm", "-o", "wide", "--server", front.url]);
    const done = runWatch(env);
    await until(() => lines(env.out) === 2, "the first row");
    assert.equal(front.tables, 1, "one Table list, no GET for the first rows");
    await server.waitForWatch();
    server.update({ ...a, metadata: { ...a.metadata, labels: { app: "web" } } });
    await until(() => lines(env.out) === 3, "the update");
    server.delete(a);
    await until(() => lines(env.out) === 4, "the delete");
    env.interrupt();
    assert.equal(await done, 0);
    assert.equal(
      env.out,
      "EVENT      NAME   DATA   AGE   LABELS\n" +
        "ADDED      a      1      5m    <none>\n" +
        "MODIFIED   a      1      5m    app=web\n" +
        "DELETED    a      1      5m    app=web\n",
    );
    assert.equal(front.tables, 2, "the update's row by one GET; the delete's row was known");
  } finally {
    await front.close();
    await server.close();
  }
});

test("watch of a namespace the server refuses (403) before the first sync exits 1 with the reason", async () => {
  const server = await FakeApiServer.start();
  try {
    server.inject({ resource: "configmaps", verb: "list", fault: { kind: "status", code: 403 } });
    const env = fakeEnv(["cm", "-o", "name", "--server", server.url]);
    assert.equal(await runWatch(env), 1);
    assert.match(env.err, /^kube-reflector: .*403/m);
    assert.ok(!/\n\s+at /.test(env.err), "no stack trace");
  } finally {
    await server.close();
  }
});

test("watch --metrics-port serves the informer's Prometheus metrics", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create(cm("a"));
    const env = fakeEnv(["cm", "-o", "name", "--metrics-port", "0", "--server", server.url]);
    let url = "";
    const done = runWatch(env, { onMetricsServer: (u) => (url = u) });
    await until(() => env.out !== "", "the add");
    const res = await fetch(url);
    const text = await res.text();
    assert.equal(res.status, 200);
    assert.match(text, /kube_reflector_lists_total\{name="configmaps"\} 1$/m);
    assert.match(env.err, /^metrics: http:\/\/127\.0\.0\.1:\d+\/metrics$/m);
    env.interrupt();
    assert.equal(await done, 0);
  } finally {
    await server.close();
  }
});

test("watch --metrics-port without prom-client exits 2 with a clear message", async () => {
  const env = fakeEnv(["cm", "--metrics-port", "9090", "--server", "http://127.0.0.1:1"]);
  const code = await runWatch(env, {
    importPromClient: () => Promise.reject(new Error("Cannot find package 'prom-client'")),
  });
  assert.equal(code, 2);
  assert.match(env.err, /^kube-reflector: --metrics-port needs the prom-client package/);
  assert.match(env.err, /npm install prom-client/);
});

test("watch NAME -A is a usage error for a namespaced resource, as in kubectl", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create(cm("a", "x"));
    server.create(cm("a", "y"));
    const env = fakeEnv(["cm", "a", "-A", "-o", "name", "--server", server.url]);
    let settled = false;
    const done = runWatch(env).finally(() => (settled = true));
    await until(() => settled || env.out !== "", "the refusal");
    if (!settled) {
      env.interrupt();
      await done;
      assert.fail(`watched every namespace's "a" instead of refusing: ${env.out}`);
    }
    assert.equal(await done, 2);
    assert.match(
      env.err,
      /^kube-reflector: a resource cannot be retrieved by name across all namespaces\n/,
    );
    assert.ok(!server.requests.some((r) => r.path.includes("/configmaps")), "nothing read");
  } finally {
    await server.close();
  }
});

test("watch --metrics-port on a port in use exits 1 naming the flag and the port", async () => {
  const server = await FakeApiServer.start();
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
  try {
    const port = (busy.address() as AddressInfo).port;
    const env = fakeEnv([
      "cm",
      "-o",
      "name",
      "--metrics-port",
      String(port),
      "--server",
      server.url,
    ]);
    assert.equal(await runWatch(env), 1);
    assert.equal(env.out, "");
    assert.equal(env.err, `kube-reflector: --metrics-port ${port}: address already in use\n`);
  } finally {
    await new Promise<void>((resolve) => busy.close(() => resolve()));
    await server.close();
  }
});
