/**
 * The Node h2 health check (`h2Dispatch`'s PINGs): a connection gone silent
 * (half-open: a NAT or load balancer that dropped it without a word) is
 * given up and the next request gets a new one; healthy connections are
 * kept, one whose bytes keep coming on a slow link (a PING's answer queued
 * behind the data in flight), and one whose process was busy when the
 * answer came (it waited unread). Node only: Deno's client is its own
 * (deno_silent_client_test.ts).
 *
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import { h2Dispatch, type H2Timing, type UndiciH2 } from "../../src/kubeconfig/_undici_h2.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm, until } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";

type Undici = UndiciH2 & { fetch(url: string, init: Record<string, unknown>): Promise<Response> };

/**
 * A TLS FakeApiServer behind a proxy (`proxyFor`, default a TCP proxy), and
 * an h2Dispatch to it with `timing`; `get(path)` sends a GET through it,
 * `clients` are the undici Clients it made.
 */
async function healthFixture<P extends { url: string; accepted: number; close(): Promise<void> }>(
  timing: Partial<H2Timing>,
  proxyFor: (target: URL) => Promise<P>,
) {
  // deno-lint-ignore no-import-prefix
  const undici = await import("npm:undici@^7") as unknown as Undici;
  const clients: unknown[] = [];
  class Client extends (undici.Client as unknown as new (o: unknown, opts: unknown) => object) {
    constructor(o: unknown, opts: unknown) {
      super(o, opts);
      clients.push(this);
    }
  }
  const pki = await createPki();
  const server = await FakeApiServer.start({ tls: { cert: pki.server.cert, key: pki.server.key } });
  const proxy = await proxyFor(new URL(server.url));
  const h2 = h2Dispatch({ ...undici, Client } as unknown as UndiciH2, Infinity, {
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { ca: pki.ca.cert },
    allowH2: true,
  }, timing);
  const get = (path: string) =>
    h2.gate(
      `${proxy.url}${path}`,
      undefined,
      (dispatcher) => undici.fetch(`${proxy.url}${path}`, { dispatcher }),
    );
  return {
    server,
    proxy,
    clients,
    get,
    async close() {
      await h2.close();
      await proxy.close();
      await server.close();
      await pki.cleanup();
    },
  };
}

/** A proxy whose server-to-client direction runs at `bytesPerSecond` (a slow link); counts connections. */
async function startSlowProxy(target: URL, bytesPerSecond: number) {
  const sockets = new Set<net.Socket>();
  const timers = new Set<ReturnType<typeof setInterval>>();
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => (upstream.destroy(), sockets.delete(client)));
    upstream.on("close", () => (client.destroy(), sockets.delete(upstream)));
    client.pipe(upstream);
    let queue = Buffer.alloc(0);
    upstream.on("data", (chunk: Buffer) => (queue = Buffer.concat([queue, chunk])));
    const perTick = Math.max(1, Math.round(bytesPerSecond / 100));
    const timer = setInterval(() => {
      if (queue.length === 0 || client.destroyed) return;
      client.write(queue.subarray(0, perTick));
      queue = queue.subarray(perTick);
    }, 10);
    timers.add(timer);
    client.on("close", () => (clearInterval(timer), timers.delete(timer)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    async close() {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test("a connection gone silent is given up when its PING goes unanswered: its watch fails, the next request gets a new connection", async () => {
  if (runtime !== "node") return;
  const f = await healthFixture({ pingIntervalMs: 50, pingTimeoutMs: 1_000 }, startTcpProxy);
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    f.server.create(cm("a", "x"));
    const watch = await f.get("/api/v1/namespaces/a/configmaps?watch=1");
    assert.equal(watch.status, 200);
    reader = watch.body!.getReader();
    assert.equal((await reader.read()).done, false); // its ADDED event
    // healthy: many PINGs answered, the connection stays and the watch goes on
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    f.server.create(cm("a", "y"));
    assert.equal((await reader.read()).done, false);
    assert.equal(f.proxy.accepted, 1);
    f.proxy.silence();
    let ended: string | undefined;
    reader.read().then((r) => (ended = r.done ? "done" : "data"), (e) => (ended = `failed: ${e}`));
    await until(() => ended !== undefined, "the watch on the dead connection to end", 10_000);
    assert.match(ended!, /failed/);
    const res = await f.get("/api/v1/namespaces/a/configmaps/x");
    assert.equal(res.status, 200);
    assert.equal((await res.json() as { metadata: { name: string } }).metadata.name, "x");
    assert.equal(f.proxy.accepted, 2, "the request went to a new connection");
  } finally {
    await reader?.cancel().catch(() => {});
    await f.close();
  }
});

test("a healthy connection on a slow link (its PING's answer queued behind the data in flight) is not given up mid-list: bytes that keep coming are proof enough", async () => {
  if (runtime !== "node") return;
  // 200 KB/s down: the data in flight (up to undici's 256 KB stream window) takes ~1.3 s to drain, so a
  // PING's answer sent behind it takes as long. Scaled: with the defaults (15 s), a link under ~17-35 KB/s.
  const f = await healthFixture(
    { pingIntervalMs: 100, pingTimeoutMs: 500 },
    (target) => startSlowProxy(target, 200_000),
  );
  try {
    const big = "x".repeat(100_000);
    for (let i = 0; i < 10; i++) f.server.create({ ...cm("a", `big-${i}`), data: { v: big } });
    const list = await f.get("/api/v1/namespaces/a/configmaps");
    assert.equal(list.status, 200);
    const outcome = await list.json().then(
      (l: { items: unknown[] }) => `items: ${l.items.length}`,
      (e) => `failed: ${e}`,
    );
    assert.equal(outcome, "items: 10");
    assert.equal(f.proxy.accepted, 1);
  } finally {
    await f.close();
  }
});

/** A watch on a healthy connection whose process is busy `blockMs` right after a PING went out: it goes on. */
async function busyAfterPing(blockMs: number): Promise<void> {
  if (runtime !== "node") return;
  const f = await healthFixture({ pingIntervalMs: 200, pingTimeoutMs: 100 }, startTcpProxy);
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    f.server.create(cm("a", "x"));
    const watch = await f.get("/api/v1/namespaces/a/configmaps?watch=1");
    reader = watch.body!.getReader();
    assert.equal((await reader.read()).done, false); // ADDED x
    const c = f.clients[0] as Record<symbol, unknown>;
    const sym = Object.getOwnPropertySymbols(c).find((s) => s.description === "http2Session")!;
    const session = c[sym] as { ping(cb: (err: Error | null) => void): boolean };
    const ping = session.ping.bind(session);
    let blocked = false;
    // One PING goes out, then (in the same turn of the loop) the process is busy for `blockMs` (a big
    // JSON.parse, a sync reconcile, a GC pause, a debugger stop): scaled to the defaults, 45 s (300) or
    // 18 s (120); the PING's answer comes meanwhile and waits unread in the socket.
    session.ping = (cb) => {
      const sent = ping(cb);
      if (!blocked) {
        blocked = true;
        // (in a later callback of this turn of the loop, as any I/O or immediate callback would be)
        setImmediate(() => {
          const end = Date.now() + blockMs;
          while (Date.now() < end) { /* busy */ }
        });
      }
      return sent;
    };
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.ok(blocked);
    f.server.create(cm("a", "y"));
    const next = await reader.read().then((r) => (r.done ? "done" : "data"), (e) => `failed: ${e}`);
    assert.equal(next, "data", "the watch on the healthy connection goes on");
    assert.equal(f.proxy.accepted, 1);
  } finally {
    await reader?.cancel().catch(() => {});
    await f.close();
  }
}

test("a healthy connection is not given up when the process was busy 3 x pingTimeoutMs right after a PING went out (its answer waiting unread)", async () => {
  await busyAfterPing(300);
});

test("nor when the process was busy 1.2 x pingTimeoutMs (the wait ended a little late)", async () => {
  await busyAfterPing(120);
});
