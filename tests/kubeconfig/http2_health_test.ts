/**
 * A half-open HTTP/2 connection on Node (a NAT or load balancer that dropped
 * it without a word): its PING goes unanswered, the connection is given up,
 * and the next request (a watch cut by its idle deadline, watching again)
 * gets a new connection instead of the dead one. Node only: Deno's client
 * is its own.
 */
import assert from "node:assert/strict";
import { h2Dispatch, type UndiciH2 } from "../../src/kubeconfig/_undici_h2.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm, until } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";

test("a connection gone silent is given up when its PING goes unanswered: its watch fails, the next request gets a new connection", async () => {
  if (runtime !== "node") return;
  // deno-lint-ignore no-import-prefix
  const undici = await import("npm:undici@^7") as unknown as UndiciH2 & {
    fetch(url: string, init: Record<string, unknown>): Promise<Response>;
  };
  const pki = await createPki();
  const server = await FakeApiServer.start({ tls: { cert: pki.server.cert, key: pki.server.key } });
  const proxy = await startTcpProxy(new URL(server.url));
  const h2 = h2Dispatch(undici, Infinity, {
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { ca: pki.ca.cert },
    allowH2: true,
  }, { pingIntervalMs: 50, pingTimeoutMs: 1_000 });
  const get = (path: string) =>
    h2.gate(
      `${proxy.url}${path}`,
      undefined,
      (dispatcher) => undici.fetch(`${proxy.url}${path}`, { dispatcher }),
    );
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    server.create(cm("a", "x"));
    const watch = await get("/api/v1/namespaces/a/configmaps?watch=1");
    assert.equal(watch.status, 200);
    reader = watch.body!.getReader();
    assert.equal((await reader.read()).done, false); // its ADDED event
    // healthy: many PINGs answered, the connection stays and the watch goes on
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    server.create(cm("a", "y"));
    assert.equal((await reader.read()).done, false);
    assert.equal(proxy.accepted, 1);
    proxy.silence();
    let ended: string | undefined;
    reader.read().then((r) => (ended = r.done ? "done" : "data"), (e) => (ended = `failed: ${e}`));
    await until(() => ended !== undefined, "the watch on the dead connection to end", 10_000);
    assert.match(ended!, /failed/);
    const res = await get("/api/v1/namespaces/a/configmaps/x");
    assert.equal(res.status, 200);
    assert.equal((await res.json() as { metadata: { name: string } }).metadata.name, "x");
    assert.equal(proxy.accepted, 2, "the request went to a new connection");
  } finally {
    await reader?.cancel().catch(() => {});
    await h2.close();
    await proxy.close();
    await server.close();
    await pki.cleanup();
  }
});
