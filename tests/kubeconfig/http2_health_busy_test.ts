/**
 * The Node h2 health check keeps healthy connections: one whose bytes keep
 * coming on a slow link (a PING's answer queued behind the data in flight),
 * and one whose process was busy when the answer came (it waited unread).
 * Node only.
 *
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import { h2Dispatch, type UndiciH2 } from "../../src/kubeconfig/_undici_h2.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runtime, test } from "../_test.ts";
import { cm } from "./_h2_fixture.ts";
import { createPki } from "./_pki.ts";
import { startTcpProxy } from "./_tcp_proxy.ts";

type Undici = UndiciH2 & { fetch(url: string, init: Record<string, unknown>): Promise<Response> };

async function loadUndici(): Promise<Undici> {
  // deno-lint-ignore no-import-prefix
  return await import("npm:undici@^7") as unknown as Undici;
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

test("a healthy connection on a slow link (its PING's answer queued behind the data in flight) is not given up mid-list: bytes that keep coming are proof enough", async () => {
  if (runtime !== "node") return;
  const undici = await loadUndici();
  const pki = await createPki();
  const server = await FakeApiServer.start({ tls: { cert: pki.server.cert, key: pki.server.key } });
  // 200 KB/s down: the data in flight (up to undici's 256 KB stream window) takes ~1.3 s to drain, so a
  // PING's ACK sent behind it takes as long. Scaled: with the defaults (15 s), a link under ~17-35 KB/s.
  const proxy = await startSlowProxy(new URL(server.url), 200_000);
  const h2 = h2Dispatch(undici, Infinity, {
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { ca: pki.ca.cert },
    allowH2: true,
  }, { pingIntervalMs: 100, pingTimeoutMs: 500 });
  try {
    const big = "x".repeat(100_000);
    for (let i = 0; i < 10; i++) {
      const o = cm("a", `big-${i}`);
      server.create({ ...o, data: { v: big } });
    }
    const url = `${proxy.url}/api/v1/namespaces/a/configmaps`;
    const list = await h2.gate(url, undefined, (dispatcher) => undici.fetch(url, { dispatcher }));
    assert.equal(list.status, 200);
    let outcome: string;
    try {
      const items = (await list.json() as { items: unknown[] }).items;
      outcome = `items: ${items.length}`;
    } catch (e) {
      outcome = `failed: ${e}`;
    }
    // bytes arrived all along (the connection was plainly alive), yet its PING's late ACK gave it up
    assert.equal(outcome, "items: 10");
    assert.equal(proxy.accepted, 1);
  } finally {
    await h2.close();
    await proxy.close();
    await server.close();
    await pki.cleanup();
  }
});

async function busyAfterPing(blockMs: number): Promise<void> {
  if (runtime !== "node") return;
  const undici = await loadUndici();
  const made: unknown[] = [];
  class Client extends (undici.Client as unknown as new (o: unknown, opts: unknown) => object) {
    constructor(o: unknown, opts: unknown) {
      super(o, opts);
      made.push(this);
    }
  }
  const pki = await createPki();
  const server = await FakeApiServer.start({ tls: { cert: pki.server.cert, key: pki.server.key } });
  const proxy = await startTcpProxy(new URL(server.url));
  const h2 = h2Dispatch({ ...undici, Client } as unknown as UndiciH2, Infinity, {
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { ca: pki.ca.cert },
    allowH2: true,
  }, { pingIntervalMs: 200, pingTimeoutMs: 100 });
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
    reader = watch.body!.getReader();
    assert.equal((await reader.read()).done, false); // ADDED x
    const c = made[0] as Record<symbol, unknown>;
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
    server.create(cm("a", "y"));
    let next: string;
    try {
      next = (await reader.read()).done ? "done" : "data";
    } catch (e) {
      next = `failed: ${e}`;
    }
    assert.equal(next, "data", "the watch on the healthy connection goes on");
    assert.equal(proxy.accepted, 1);
  } finally {
    await reader?.cancel().catch(() => {});
    await h2.close();
    await proxy.close();
    await server.close();
    await pki.cleanup();
  }
}

test("a healthy connection is not given up when the process was busy 3 x pingTimeoutMs right after a PING went out (its answer waiting unread)", async () => {
  await busyAfterPing(300);
});

test("nor when the process was busy 1.2 x pingTimeoutMs (the wait ended a little late)", async () => {
  await busyAfterPing(120);
});
