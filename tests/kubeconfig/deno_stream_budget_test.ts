/**
 * Deno's budgeted fetch against a TLS h2 FakeApiServer with real
 * `Deno.HttpClient`s: the in-flight count is exact whichever way a request
 * ends, and short requests keep to one connection. (Node does not use this
 * path: its undici agent learns the server's limit.)
 *
 * @module
 */
import assert from "node:assert/strict";
import { KubeClient, KubeStatusError } from "../../mod.ts";
import { streamBudgetFetch } from "../../src/kubeconfig/_stream_budget_fetch.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { createPki } from "./_pki.ts";
import { cm, h2Fixture } from "./_h2_fixture.ts";

// deno-lint-ignore no-explicit-any
const Deno_ = (globalThis as any).Deno;

type DenoClient = { close(): void };

if (runtime === "deno") {
  test("Deno budgeted fetch: the count is exact across a body read out, cancelled, a request aborted, a reset, an error answer", async () => {
    const pki = await createPki();
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    const budgeted = streamBudgetFetch<DenoClient>({
      budget: 2,
      createClient: () => Deno_.createHttpClient({ caCerts: [pki.ca.cert] }),
      send: (client, input, init) => fetch(input, { ...init, client } as RequestInit),
      closeClient: (c) => c.close(),
    });
    const list = `${server.url}/api/v1/namespaces/a/configmaps`;
    const watch = `${list}?watch=1`;
    try {
      server.create(cm("a", "x"));
      // Read to the end.
      const listed = await (await budgeted.fetch(list)).json();
      assert.equal(listed.items.length, 1);
      assert.deepEqual(budgeted.inFlight(), [0]);
      // A watch whose body is cancelled.
      const w = await budgeted.fetch(watch);
      assert.deepEqual(budgeted.inFlight(), [1]);
      await server.waitFor(() => server.openWatches === 1);
      await w.body!.cancel();
      assert.deepEqual(budgeted.inFlight(), [0]);
      await server.waitFor(() => server.openWatches === 0);
      // A watch aborted while its events are read.
      const ac = new AbortController();
      const w2 = await budgeted.fetch(watch, { signal: ac.signal });
      const reader = w2.body!.getReader();
      const pendingRead = reader.read();
      ac.abort();
      await assert.rejects(pendingRead);
      assert.deepEqual(budgeted.inFlight(), [0]);
      // Aborted before any answer.
      const ac2 = new AbortController();
      const early = budgeted.fetch(watch, { signal: ac2.signal });
      ac2.abort();
      await assert.rejects(early, { name: "AbortError" });
      assert.deepEqual(budgeted.inFlight(), [0]);
      // The server resets the connection at request time: the request fails (every time: Deno's
      // client sends a request reset before any answer once more on a new connection).
      const resets = server.inject({ verb: "list", times: 100, fault: { kind: "reset" } });
      await assert.rejects(budgeted.fetch(list));
      resets.cancel();
      assert.deepEqual(budgeted.inFlight(), [0]);
      // The server resets the connection in the middle of a watch's body.
      server.inject({ verb: "watch", times: 1, fault: { kind: "reset", afterEvents: 1 } });
      // (A TCP reset may discard the answer's headers with the rest: then the request itself fails.)
      await assert.rejects(budgeted.fetch(`${watch}&resourceVersion=0`).then((r) => r.text()));
      assert.deepEqual(budgeted.inFlight(), [0]);
      // An error answer (a plain-text 404) whose body the library reads for the error.
      server.inject({ verb: "get", times: 1, fault: { kind: "status", code: 404, body: "text" } });
      const client = new KubeClient({ server: server.url, fetch: budgeted.fetch });
      await assert.rejects(
        client.requestJson("/api/v1/namespaces/a/configmaps/x"),
        (err) => err instanceof KubeStatusError && err.code === 404,
      );
      assert.deepEqual(budgeted.inFlight(), [0]);
      // Nothing leaked: two watches fill the first client, a third takes a second one.
      const acs = [new AbortController(), new AbortController(), new AbortController()];
      const watches = [];
      for (const a of acs) watches.push(await budgeted.fetch(watch, { signal: a.signal }));
      assert.deepEqual(budgeted.inFlight(), [2, 1]);
      for (const a of acs) a.abort();
      await Promise.allSettled(watches.map((r) => r.body!.cancel()));
      assert.deepEqual(budgeted.inFlight(), [0, 0]);
    } finally {
      budgeted.close();
      await server.close();
      await pki.cleanup();
    }
  });

  test("Deno, TLS kubeconfig: a burst of 20 requests opens one connection", async () => {
    const f = await h2Fixture();
    try {
      f.server.create(cm("a", "x"));
      // The first request goes alone, the others follow on its connection: no transient ones.
      await Promise.all(
        Array.from(
          { length: 20 },
          () => f.conn.client.requestJson("/api/v1/namespaces/a/configmaps"),
        ),
      );
      assert.equal(f.server.connections.length, 1, JSON.stringify(f.server.connections));
      assert.equal(f.server.connections[0].requests, 20);
    } finally {
      await f.close();
    }
  });

  test("Deno, TLS kubeconfig: many short requests in sequence keep to one connection (budget 2)", async () => {
    const f = await h2Fixture({}, { maxStreamsPerConnection: 2 });
    try {
      f.server.create(cm("a", "x"));
      for (let i = 0; i < 30; i++) {
        await f.conn.client.requestJson("/api/v1/namespaces/a/configmaps");
        await assert.rejects(f.conn.client.requestJson("/api/v1/namespaces/a/configmaps/missing"));
      }
      assert.equal(f.server.connections.length, 1, JSON.stringify(f.server.connections));
      assert.equal(f.server.connections[0].protocol, "h2");
      assert.equal(f.server.connections[0].requests, 60);
    } finally {
      await f.close();
    }
  });
}
