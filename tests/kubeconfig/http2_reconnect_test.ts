/**
 * HTTP/2 on Node after a reset and when a connection cannot be made: one
 * connection at a time per server (Go's rule), the waiters sharing it.
 * Node only: on Deno a TLS kubeconfig goes through Deno.createHttpClient,
 * and none of the undici gate under test runs there.
 */
import assert from "node:assert/strict";
import { createTlsFetch } from "../../kubeconfig.ts";
import { Informer, KubeClient, type KubeObject, resourceListerWatcher } from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm, until } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";

if (runtime === "node") {
  test("after every connection is reset, 20 informers retrying within one TLS handshake share ONE new h2 connection", async () => {
    const pki = await createPki();
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    const proxy = await startTcpProxy(new URL(server.url));
    const tls = await createTlsFetch({ ca: pki.ca.cert }, { runtime: "node" });
    let calls = 0;
    const client = new KubeClient({
      server: proxy.url,
      fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
        calls++;
        return tls.fetch(input, init);
      }) as typeof fetch,
    });
    const ac = new AbortController();
    const runs: Promise<void>[] = [];
    try {
      const namespaces = Array.from({ length: 20 }, (_, i) => `ns${i}`);
      const informers = await Promise.all(namespaces.map(async (namespace) => {
        const informer = new Informer<KubeObject>(
          resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps", namespace }),
          { name: namespace, expectedKind: "ConfigMap", backoff: { initialMs: 5, capMs: 50 } },
        );
        runs.push(informer.run({ signal: ac.signal }));
        await informer.waitForSync();
        return informer;
      }));
      await until(() => server.openWatches === 20, "20 watches");
      assert.equal(proxy.accepted, 1);
      // A reset, and the next handshake held until every informer has retried (all 20 during it).
      proxy.holding = true;
      const before = calls;
      proxy.resetAll();
      await until(() => calls - before >= 20, "every informer to retry");
      assert.equal(proxy.accepted, 2, "one connection attempt while the handshake is under way");
      proxy.holding = false;
      proxy.release();
      await until(() => server.openWatches === 20, "20 watches again");
      for (const ns of namespaces) server.create(cm(ns, "after"));
      await until(
        () => informers.every((inf, i) => inf.lister().get(namespaces[i], "after") !== undefined),
        "every informer to see a change made after the reset",
      );
      assert.equal(proxy.accepted, 2, "every informer on the one new connection");
      const open = server.connections.filter((c) => c.open);
      assert.equal(open.length, 1, JSON.stringify(server.connections));
      assert.equal(open[0].protocol, "h2");
      assert.equal(open[0].streams, 20);
    } finally {
      ac.abort();
      await Promise.all(runs);
      await tls.close();
      await proxy.close();
      await server.close();
      await pki.cleanup();
    }
  });

  test("when the connection being made fails, every request waiting for it makes its own attempt at once", async () => {
    const pki = await createPki();
    const silent = await startTcpProxy(undefined); // accepts TCP, never completes TLS
    const tls = await createTlsFetch({ ca: pki.ca.cert }, { runtime: "node" });
    try {
      const N = 5;
      const outcomes = Array.from(
        { length: N },
        (_, i) => tls.fetch(`${silent.url}/r${i}`).then(() => "answered", (e: Error) => e.name),
      );
      await until(() => silent.accepted === 1, "the first attempt");
      silent.resetAll(); // the first attempt fails...
      // ...and the four waiters attempt together: all four are open at once, not one after another.
      await until(() => silent.open === N - 1, "four attempts at once");
      assert.equal(silent.accepted, N);
      silent.resetAll();
      const names = await Promise.all(outcomes);
      assert.equal(names.filter((n) => n !== "answered").length, N, names.join());
      assert.ok(!names.includes("AbortError"), names.join());
    } finally {
      await tls.close();
      await silent.close();
      await pki.cleanup();
    }
  });
}
