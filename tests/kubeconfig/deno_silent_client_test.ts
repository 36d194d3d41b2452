/**
 * Deno: a connection gone silent (half-open: a NAT or load balancer that
 * dropped it without a word). Deno's client has no PING health check, so
 * without the budget's retirement a watch cut by its idle deadline would
 * watch again on the same dead connection and wait again. Deno only (Node's
 * undici path pings: http2_health_test.ts).
 *
 * @module
 */
import assert from "node:assert/strict";
import { streamBudgetFetch } from "../../src/kubeconfig/_stream_budget_fetch.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm, until } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";

// deno-lint-ignore no-explicit-any
const Deno_ = (globalThis as any).Deno;

type DenoClient = { close(): void };

if (runtime === "deno") {
  test("Deno: a watch its caller ends after silence on a dead connection is tried again on a new connection, and answered", async () => {
    const pki = await createPki();
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    const proxy = await startTcpProxy(new URL(server.url));
    let t = 0;
    const budgeted = streamBudgetFetch<DenoClient>({
      budget: 100,
      createClient: () => Deno_.createHttpClient({ caCerts: [pki.ca.cert] }),
      send: (client, input, init) => fetch(input, { ...init, client } as RequestInit),
      closeClient: (c) => c.close(),
      clock: {
        now: () => t,
        setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
        clearTimeout: (h: unknown) => clearTimeout(h as number),
      },
    });
    const list = `${proxy.url}/api/v1/namespaces/a/configmaps`;
    const giveUp = new AbortController(); // ends the test's waits, should they hang
    try {
      server.create(cm("a", "x"));
      const watching = new AbortController();
      const watch = await budgeted.fetch(`${list}?watch=1`, { signal: watching.signal });
      const reader = watch.body!.getReader();
      assert.equal((await reader.read()).done, false); // its ADDED event
      proxy.silence();
      t = 120_000; // the watch's idle deadline: nothing came for two minutes
      watching.abort();
      await reader.read().catch(() => {});
      let answered: string | undefined;
      budgeted.fetch(`${list}/x`, { signal: giveUp.signal }).then(
        async (
          res,
        ) => (answered = (await res.json() as { metadata: { name: string } }).metadata.name),
        (e) => (answered = `failed: ${e}`),
      );
      await until(() => answered !== undefined, "the next request's answer", 10_000);
      assert.equal(answered, "x");
      assert.equal(proxy.accepted, 2, "on a new connection");
    } finally {
      giveUp.abort();
      budgeted.close();
      await proxy.close();
      await server.close();
      await pki.cleanup();
    }
  });
}
