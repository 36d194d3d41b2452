/** The FakeApiServer API: objects, CRUD over HTTP, auth, the request log, waits, going down, closing. */
import assert from "node:assert/strict";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { FakeApiServer } from "../../testkit.ts";
import { test } from "../_test.ts";
import { settles } from "../_harness.ts";
import { configMap, LineReader, withServer } from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";

test("objects get uid, creationTimestamp and one global increasing resourceVersion", async () => {
  await withServer({ startResourceVersion: 100 }, (server) => {
    const a = server.create(configMap("a", "fx", { data: { k: "1" } }));
    const ns = server.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "fx", namespace: "ignored" },
    });
    const d = server.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "fx" },
    });
    assert.deepEqual([a, ns, d].map((o) => o.metadata.resourceVersion), ["101", "102", "103"]);
    assert.match(a.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.match(a.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(ns.metadata.namespace, undefined, "cluster-scoped");
    assert.deepEqual(Object.keys(a), ["kind", "apiVersion", "metadata", "data"]);
    assert.throws(
      () => server.create(configMap("a")),
      (err: unknown) => err instanceof KubeStatusError && err.code === 409,
    );
    const b = server.update({ ...a, data: { k: "2" } });
    assert.equal(b.metadata.uid, a.metadata.uid);
    assert.equal(b.metadata.resourceVersion, "104");
    assert.throws(
      () => server.update(a),
      (err: unknown) => err instanceof KubeStatusError && err.reason === "Conflict",
    );
    const c = server.upsert({ ...a, data: { k: "3" } });
    assert.equal(c.metadata.resourceVersion, "105");
    const gone = server.delete(c);
    assert.equal(gone.metadata.resourceVersion, "106");
    assert.deepEqual(gone.data, { k: "3" });
    assert.equal(server.get(c), undefined);
    assert.equal(server.resourceVersion, "106");
    assert.deepEqual(server.objects({ resource: "deployments" }).map((o) => o.metadata.name), [
      "d",
    ]);
    assert.throws(
      () => server.create({ apiVersion: "v9", kind: "Nope", metadata: { name: "x" } }),
      TypeError,
    );
    const generated = server.create(
      configMap("", "fx", { metadata: { generateName: "gen-", namespace: "fx" } }),
    );
    assert.match(generated.metadata.name!, /^gen-[a-z0-9]{5}$/);
  });
});

test("HTTP create, get, update and delete answer like the real server", async () => {
  await withServer({}, async (server) => {
    const send = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    const created = await send("POST", FX, configMap("a", "fx", { data: { k: "1" } }));
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.resourceVersion, "2");
    const got = await send("GET", `${FX}/a`);
    assert.equal(got.body.kind, "ConfigMap");
    const updated = await send("PUT", `${FX}/a`, { ...got.body, data: { k: "2" } });
    assert.equal(updated.status, 200);
    const stale = await send("PUT", `${FX}/a`, got.body);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, "Conflict");
    const deleted = await send("DELETE", `${FX}/a`);
    assert.equal(deleted.body.status, "Success");
    assert.equal(deleted.body.details.uid, created.body.metadata.uid);
    const missing = await send("GET", `${FX}/a`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'configmaps "a" not found');
    const wrongNs = await send("POST", FX, configMap("b", "other"));
    assert.equal(wrongNs.status, 400);
    const text = await fetch(`${server.url}/healthz`);
    assert.equal(await text.text(), "404 page not found\n");
  });
});

test("custom resources are served under /apis/GROUP/VERSION once added", async () => {
  await withServer({}, async (server) => {
    server.addResource({
      group: "example.com",
      version: "v1",
      resource: "widgets",
      kind: "Widget",
      namespaced: true,
    });
    server.create({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "fx" },
    });
    const res = await fetch(`${server.url}/apis/example.com/v1/widgets`);
    const list = await res.json();
    assert.equal(list.kind, "WidgetList");
    assert.equal(list.apiVersion, "example.com/v1");
    assert.equal(list.items[0].metadata.name, "w");
  });
});

test("tokens gate every request and setTokens rotates them; the log records the header", async () => {
  await withServer({ tokens: ["one"] }, async (server) => {
    const get = async (token: string) => {
      const res = await fetch(`${server.url}${FX}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      await res.body?.cancel();
      return res.status;
    };
    assert.equal(await get("one"), 200);
    server.setTokens(["two"]);
    assert.equal(await get("one"), 401);
    assert.equal(await get("two"), 200);
    assert.deepEqual(server.requests.map((r) => r.authorization), [
      "Bearer one",
      "Bearer one",
      "Bearer two",
    ]);
    assert.deepEqual(server.requests.map((r) => r.status), [200, 401, 200]);
  });
});

test("the request log names verb, resource, namespace and query; waits resolve on requests and watches", async () => {
  await withServer({}, async (server) => {
    const since = server.requestCount;
    const waiting = server.waitForRequests((r) => r.verb === "list", { since, count: 2 });
    for (const path of [`${FX}?limit=5`, "/api/v1/configmaps", `${FX}/x`]) {
      const res = await fetch(`${server.url}${path}`);
      await res.body?.cancel();
    }
    const lists = await waiting;
    assert.deepEqual(lists.map((r) => [r.verb, r.resource, r.namespace, r.query.get("limit")]), [
      ["list", "configmaps", "fx", "5"],
      ["list", "configmaps", undefined, null],
    ]);
    assert.equal(server.requests[2].verb, "get");
    assert.equal(server.requests[2].name, "x");
    server.clearRequests();
    assert.equal(server.requests.length, 0);
    assert.equal(server.requestCount, 3);

    const watched = server.waitForWatch();
    const res = await fetch(`${server.url}${FX}?watch=1`);
    await watched;
    assert.equal(server.requests[0].verb, "watch");
    await res.body?.cancel();
    await assert.rejects(server.waitFor(() => false, { timeoutMs: 10 }), /timed out after 10 ms/);
    const ac = new AbortController();
    const aborted = server.waitForWatch({ count: 5, signal: ac.signal });
    ac.abort(new Error("stop"));
    await assert.rejects(aborted, /stop/);
  });
});

test("goDown refuses connections and comeUp listens on the same port; refuseConnections does both", async () => {
  await withServer({}, async (server) => {
    const port = server.port;
    const res = await fetch(`${server.url}${FX}?watch=1`);
    const reader = new LineReader(res);
    await server.waitForWatch();
    await server.goDown();
    assert.equal(server.isUp, false);
    await assert.rejects(reader.next(), TypeError, "the open watch is cut");
    await reader.cancel();
    assert.equal(server.openWatches, 0);
    await assert.rejects(fetch(`${server.url}${FX}`), TypeError);
    await server.comeUp();
    assert.equal(server.port, port);
    const ok = await fetch(`${server.url}${FX}`);
    await ok.body?.cancel();
    assert.equal(ok.status, 200);

    const back = server.refuseConnections(100);
    // A 100 ms timer started now fires before the server's, started once it is down.
    const upAt100 = new Promise<boolean>((r) => setTimeout(() => r(server.isUp), 100));
    await assert.rejects(fetch(`${server.url}${FX}`), TypeError);
    assert.equal(await upAt100, false, "still down 100 ms after");
    await back;
    assert.equal(server.isUp, true);
    const again = await fetch(`${server.url}${FX}`);
    await again.body?.cancel();
    assert.equal(again.status, 200);
  });
});

test("close stops watches, stalled responses, delayed lists, outage timers and waits at once", async () => {
  const server = await FakeApiServer.start({ tooLargeDelayMs: 60_000 });
  const watch = await fetch(`${server.url}${FX}?watch=1`);
  server.create(configMap("big", "fx", { data: { k: "x".repeat(100_000) } }));
  server.inject({ verb: "watch", fault: { kind: "chunked", chunkSize: 10 } });
  const chunking = new LineReader(await fetch(`${server.url}${FX}?watch=1`));
  await server.waitForWatch({ count: 2 });
  server.inject({ verb: "list", fault: { kind: "stall" } });
  const stalled = await fetch(`${server.url}${FX}`);
  const delayed = fetch(`${server.url}${FX}?resourceVersion=999`).then((r) => r.text(), (e) => e);
  await server.waitForRequests((r) => r.query.get("resourceVersion") === "999");
  const waiting = server.waitForWatch({ count: 99, timeoutMs: 60_000 });
  // Left alone, the wait and the delayed list would take 60 s, the rest forever.
  await settles(
    (async () => {
      await server.close();
      await server.close();
      await assert.rejects(waiting, /closed/);
      assert.ok((await delayed) instanceof TypeError, "the delayed list is cut");
      await assert.rejects(watch.text(), TypeError);
      await assert.rejects(stalled.text(), TypeError);
      await assert.rejects(chunking.next(), TypeError, "cut mid-event");
      await chunking.cancel();
    })(),
    "close() cutting every one of them",
  );

  const other = await FakeApiServer.start();
  const outage = other.refuseConnections(60_000);
  await other.close();
  await settles(outage, "close() cutting a 60 s outage");
  await assert.rejects(FakeApiServer.start({ historySize: -1 }), RangeError);
});
