/**
 * `KubeConnection.close()` aborts the requests still running, on every path
 * a kubeconfig can take (h2 and HTTP/1.1 over TLS, plain HTTP), and a slow
 * first answer on a connection does not hold the requests behind it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createTlsFetch, loadKubeConfig } from "../../kubeconfig.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm, h2Fixture, until } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";
import type { KubeConnection } from "../../src/kubeconfig/kube_connection.ts";

/** Opens a watch of namespace `a` on `conn`, reads its first event, and checks close() ends the next read. */
async function closeEndsWatch(conn: KubeConnection, server: FakeApiServer): Promise<void> {
  server.create(cm("a", "x"));
  const res = await conn.client.request("/api/v1/namespaces/a/configmaps", {
    query: { watch: "1" },
  });
  const reader = res.body!.getReader();
  try {
    assert.equal((await reader.read()).done, false); // the ADDED event
    let settled = false;
    reader.read().then(() => (settled = true), () => (settled = true));
    await conn.close();
    await until(() => settled, "the watch's read to end once the connection is closed", 10_000);
    await until(() => server.openWatches === 0, "the server to see the watch end", 10_000);
  } finally {
    await reader.cancel().catch(() => {});
  }
}

for (const http2 of [true, false]) {
  test(`close() ends a watch still streaming over TLS (http2: ${http2})`, async () => {
    const f = await h2Fixture({}, { http2 });
    try {
      await closeEndsWatch(f.conn, f.server);
    } finally {
      await f.close();
    }
  });
}

test("close() ends a watch still streaming over plain HTTP (the runtime's own fetch)", async () => {
  const server = await FakeApiServer.start();
  const conn = await loadKubeConfig({
    text: JSON.stringify({
      "current-context": "t",
      clusters: [{ name: "c", cluster: { server: server.url } }],
      users: [{ name: "u", user: {} }],
      contexts: [{ name: "t", context: { cluster: "c", user: "u" } }],
    }),
  });
  try {
    assert.equal(conn.via, "native");
    await closeEndsWatch(conn, server);
  } finally {
    await conn.close();
    await server.close();
  }
});

test("close() ends a request whose answer has not come yet, and one waiting behind it", async () => {
  const f = await h2Fixture({ tooLargeDelayMs: 60_000 });
  const settled: string[] = [];
  const pending: Promise<unknown>[] = [];
  try {
    f.server.create(cm("a", "x"));
    const future = String(Number(f.server.resourceVersion) + 1_000);
    pending.push(
      f.conn.client.requestJson("/api/v1/namespaces/a/configmaps", {
        query: { resourceVersion: future },
      }).then(() => settled.push("list answered"), () => settled.push("list failed")),
    );
    await until(() => f.server.connections.some((c) => c.streams > 0), "the list to arrive");
    pending.push(
      f.conn.client.requestJson("/api/v1/namespaces/a/configmaps/x")
        .then(() => settled.push("get answered"), () => settled.push("get failed")),
    );
    await f.conn.close();
    await until(() => settled.length === 2, `both requests to end (${settled})`, 10_000);
    assert.ok(settled.includes("list failed"), String(settled));
  } finally {
    await f.close();
    await Promise.all(pending);
  }
});

test("a GET is answered while the connection's first request (a list waiting for its resourceVersion) has no answer yet", async () => {
  const f = await h2Fixture({ tooLargeDelayMs: 60_000 });
  const ac = new AbortController();
  try {
    f.server.create(cm("a", "x"));
    const future = String(Number(f.server.resourceVersion) + 1_000);
    const slow = f.conn.client.requestJson("/api/v1/namespaces/a/configmaps", {
      query: { resourceVersion: future },
      signal: ac.signal,
    }).then(() => "answered", () => "failed");
    let got: string | undefined;
    f.conn.client.requestJson<{ metadata: { name: string } }>("/api/v1/namespaces/a/configmaps/x")
      .then((o) => (got = o.metadata.name), (e) => (got = `failed: ${e}`));
    // (the list is answered only after a minute: the GET must not wait for it)
    await until(() => got !== undefined, "the GET's answer while the list still waits", 15_000);
    assert.equal(got, "x");
    ac.abort();
    assert.equal(await slow, "failed");
  } finally {
    ac.abort();
    await f.close();
  }
});

test("close() while a TLS handshake hangs: every request is refused, the handshake's socket is closed, no connection is tried after it", async () => {
  const pki = await createPki();
  const silent = await startTcpProxy(undefined); // accepts TCP, never answers the TLS handshake
  const tls = await createTlsFetch({ ca: pki.ca.cert });
  try {
    const outcomes = [0, 1, 2, 3].map((i) =>
      tls.fetch(`${silent.url}/r${i}`).then(() => "answered", () => "refused")
    );
    await until(() => silent.accepted >= 1, "the first attempt");
    const before = silent.accepted;
    await tls.close();
    assert.deepEqual(await Promise.all(outcomes), ["refused", "refused", "refused", "refused"]);
    // (Deno's client finishes a connect under way on its own, whatever close() did)
    if (runtime === "node") {
      // (undici's destroy alone leaves a handshake under way to its 10 s connect timeout)
      await until(
        () => silent.open === 0,
        `the handshake's socket closed (${silent.open} open)`,
        5_000,
      );
    }
    assert.equal(silent.accepted, before, "no connection tried after close()");
    await assert.rejects(tls.fetch(`${silent.url}/later`), TypeError);
    assert.equal(silent.accepted, before);
  } finally {
    await tls.close();
    await silent.close();
    await pki.cleanup();
  }
});
