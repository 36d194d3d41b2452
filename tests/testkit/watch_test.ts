/** WATCH semantics of the fake API server: initial events, replay, live events, bookmarks, selectors. */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { settles } from "../_harness.ts";
import { bodyLines, configMap, LineReader, withServer } from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";
const ref = (name: string, namespace = "fx") => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace,
  name,
});
const summary = (
  e: { type: string; object: { metadata: { name?: string; resourceVersion?: string } } },
) => `${e.type} ${e.object.metadata.name ?? ""}@${e.object.metadata.resourceVersion}`;

test("watch from resourceVersion 0 sends ADDED for each object, then every live change as it happens", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("b"));
    server.create(configMap("a"));
    server.create(configMap("x", "other"));
    const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=0`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("transfer-encoding"), "chunked");
    const reader = new LineReader(res);
    try {
      assert.equal(summary(await reader.event()), "ADDED a@3");
      assert.equal(summary(await reader.event()), "ADDED b@2");
      const [a] = server.objects({ resource: "configmaps", namespace: "fx" });
      server.update({ ...a, data: { k: "v" } });
      const modified = await reader.event();
      assert.equal(summary(modified), "MODIFIED a@5");
      assert.equal(modified.object.kind, "ConfigMap", "watch objects carry kind");
      server.create(configMap("y", "other"));
      server.delete(ref("b"));
      assert.equal(summary(await reader.event()), "DELETED b@7");
      server.create(configMap("c"));
      assert.equal(summary(await reader.event()), "ADDED c@8");
      assert.equal(server.openWatches, 1);
    } finally {
      await reader.cancel();
    }
    await server.waitFor(() => server.openWatches === 0);
  });
});

test("watch from a resourceVersion replays the later changes only", async () => {
  await withServer({ maxWatchMs: 100 }, async (server) => {
    const a = server.create(configMap("a"));
    server.create(configMap("b"));
    server.update({ ...a, data: { k: "2" } });
    server.delete(ref("b"));
    const res = await fetch(`${server.url}${FX}?watch=true&resourceVersion=3`);
    const lines = (await bodyLines(res)).map((l) => summary(JSON.parse(l)));
    assert.deepEqual(lines, ["MODIFIED a@4", "DELETED b@5"]);
  });
});

test("watch from a resourceVersion older than the history gets a 410 ERROR event, or HTTP 410", async () => {
  for (const expiredWatch of ["event", "status"] as const) {
    await withServer({ historySize: 2, expiredWatch }, async (server) => {
      for (const n of ["a", "b", "c", "d"]) server.create(configMap(n));
      const ok = await fetch(`${server.url}${FX}?watch=1&resourceVersion=3&timeoutSeconds=1`);
      await ok.body?.cancel();
      assert.equal(ok.status, 200, "rv 3: changes 4 and 5 are kept");
      const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=2`);
      if (expiredWatch === "event") {
        assert.equal(res.status, 200);
        const [line] = await bodyLines(res);
        assert.deepEqual(JSON.parse(line).object.code, 410);
      } else {
        assert.equal(res.status, 410);
        const body = await res.json();
        assert.equal(body.reason, "Expired");
        assert.equal(body.message, "too old resource version: 2 (3)");
      }
    });
  }
});

test("watch ends cleanly at timeoutSeconds, or maxWatchMs, with a last bookmark when allowed", async () => {
  await withServer({ maxWatchMs: 60 }, async (server) => {
    server.create(configMap("a"));
    const res = await fetch(
      `${server.url}${FX}?watch=1&resourceVersion=2&allowWatchBookmarks=true&timeoutSeconds=300`,
    );
    const lines = await settles(bodyLines(res), "maxWatchMs capping the 300 s asked for");
    assert.deepEqual(lines, [
      '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"2","creationTimestamp":null}}}',
    ]);
    const plain = await fetch(`${server.url}${FX}?watch=1&resourceVersion=2&timeoutSeconds=1`);
    assert.deepEqual(await bodyLines(plain), [], "no bookmark unless allowWatchBookmarks");
  });
  await withServer({}, async (server) => {
    let ended = false;
    const lines = fetch(`${server.url}${FX}?watch=1&resourceVersion=1&timeoutSeconds=1`)
      .then(bodyLines)
      .finally(() => (ended = true));
    // A 1 s timer started now fires before the server's, started when the request arrives.
    const endedAt1s = new Promise<boolean>((r) => setTimeout(() => r(ended), 1_000));
    assert.deepEqual(await lines, []);
    assert.equal(await endedAt1s, false, "timeoutSeconds=1 lasted a second");
  });
});

test("watch sends periodic bookmarks every bookmarkIntervalMs", async () => {
  await withServer({ bookmarkIntervalMs: 20 }, async (server) => {
    const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=1&allowWatchBookmarks=1`);
    const reader = new LineReader(res);
    try {
      assert.equal((await reader.event()).type, "BOOKMARK");
      server.create(configMap("a"));
      let event = await reader.event();
      while (event.type === "BOOKMARK") event = await reader.event();
      assert.equal(summary(event), "ADDED a@2");
      event = await reader.event();
      assert.deepEqual(event, {
        type: "BOOKMARK",
        object: {
          kind: "ConfigMap",
          apiVersion: "v1",
          metadata: { resourceVersion: "2", creationTimestamp: null },
        },
      });
    } finally {
      await reader.cancel();
    }
  });
});

test("watch with a label selector turns a change out of the selector into DELETED and into it into ADDED", async () => {
  await withServer({}, async (server) => {
    const labeled = (name: string, app: string, data: Record<string, string> = {}) =>
      configMap(name, "fx", { metadata: { name, namespace: "fx", labels: { app } }, data });
    const a = server.create(labeled("a", "x", { k: "old" }));
    const b = server.create(labeled("b", "y"));
    const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=0&labelSelector=app%3Dx`);
    const reader = new LineReader(res);
    try {
      assert.equal(summary(await reader.event()), "ADDED a@2");
      server.update({ ...b, data: { ignored: "yes" } });
      server.update(labeled("a", "z", { k: "new" }));
      const gone = await reader.event();
      assert.equal(summary(gone), "DELETED a@5", "b's change is not seen; a left the selector");
      assert.deepEqual(
        gone.object.data,
        { k: "old" },
        "the previous content, at the new resourceVersion",
      );
      server.update(labeled("b", "x"));
      assert.equal(summary(await reader.event()), "ADDED b@6");
      server.delete(ref("a"));
      server.delete(ref("b"));
      assert.equal(summary(await reader.event()), "DELETED b@8");
    } finally {
      await reader.cancel();
    }
    assert.equal(a.metadata.resourceVersion, "2");
  });
});

test("streaming list sends ADDED events, then the initial-events-end bookmark, then live events", async () => {
  const query =
    "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
  await withServer({ streamingList: true }, async (server) => {
    server.create(configMap("a"));
    const res = await fetch(`${server.url}${FX}?${query}&resourceVersion=`);
    const reader = new LineReader(res);
    try {
      assert.equal(summary(await reader.event()), "ADDED a@2");
      assert.equal(
        await reader.next(),
        '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"2","creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}}}}',
      );
      server.create(configMap("b"));
      assert.equal(summary(await reader.event()), "ADDED b@3");
    } finally {
      await reader.cancel();
    }
    const invalid = await fetch(`${server.url}${FX}?watch=1&sendInitialEvents=true`);
    assert.equal(invalid.status, 422);
    assert.equal((await invalid.json()).details.causes.length, 2);
  });
});

test("endWatches ends every open watch cleanly and metadata-only watches carry only metadata", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a", "fx", { data: { k: "v" } }));
    const accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    const one = await fetch(`${server.url}${FX}?watch=1`, { headers: { Accept: accept } });
    const two = await fetch(`${server.url}/api/v1/configmaps?watch=1&resourceVersion=2`);
    await server.waitForWatch({ count: 2 });
    assert.equal(server.openWatches, 2);
    server.endWatches();
    const [event] = (await bodyLines(one)).map((l) => JSON.parse(l));
    assert.deepEqual(event.object.kind, "PartialObjectMetadata");
    assert.equal(event.object.data, undefined);
    assert.deepEqual(await bodyLines(two), []);
    await server.waitFor(() => server.openWatches === 0);
    assert.equal(server.watchesOpened, 2);
  });
});
