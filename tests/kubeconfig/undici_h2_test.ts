import assert from "node:assert/strict";
import { FALLBACK_MAX_STREAMS, h2Dispatch, streamsFrom } from "../../src/kubeconfig/_undici_h2.ts";
import { test } from "../_test.ts";

type Listener = (...args: unknown[]) => void;

/** A stand-in for undici's Client: records its options and listeners. */
class FakeClient {
  pipelining: number;
  readonly options: Record<string, unknown>;
  readonly listeners = new Map<string, Listener[]>();
  constructor(_origin: string | URL, options: Record<string, unknown>) {
    this.options = options;
    this.pipelining = options.pipelining as number;
  }
  on(event: string, listener: Listener) {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }
  emit(event: string, ...args: unknown[]) {
    for (const l of this.listeners.get(event) ?? []) l(...args);
  }
}

/** A stand-in for undici's Pool: makes clients through the factory, with a connector answering `alpn`. */
function fakeUndici(alpn: () => string | false) {
  const clients: FakeClient[] = [];
  class FakePool {
    constructor(origin: string | URL, options: Record<string, unknown>) {
      const connect = (_o: unknown, cb: (e: Error | null, s: unknown) => void) =>
        cb(null, { alpnProtocol: alpn() });
      const factory = options.factory as (o: string | URL, opts: unknown) => FakeClient;
      clients.push(factory(origin, { connect }));
    }
  }
  return { undici: { Pool: FakePool, Client: FakeClient } as never, clients };
}

function connect(client: FakeClient, session?: unknown) {
  (client.options.connect as (o: unknown, cb: () => void) => void)({}, () => {});
  if (session) (client as unknown as Record<symbol, unknown>)[Symbol("http2Session")] = session;
  client.emit("connect");
}

test("streamsFrom: the server's SETTINGS value as a pipelining factor", () => {
  const table: [unknown, number][] = [
    [4, 4],
    [1000, 1000],
    [250.7, 250],
    [2 ** 32 - 1, 2 ** 31 - 1], // "unlimited"
    [undefined, FALLBACK_MAX_STREAMS],
    [0, FALLBACK_MAX_STREAMS],
    [Number.NaN, FALLBACK_MAX_STREAMS],
  ];
  for (const [value, expected] of table) assert.equal(streamsFrom(value), expected, `${value}`);
});

test("an h2 client's pipelining follows the server's maxConcurrentStreams; a later client starts there", () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  d.factory("https://k8s:6443", {});
  assert.equal(clients[0].pipelining, 1); // unknown protocol: one request
  const settings: Listener[] = [];
  connect(clients[0], { on: (_e: string, l: Listener) => settings.push(l) });
  assert.equal(clients[0].pipelining, 1); // until the SETTINGS arrive
  for (const l of settings) l({ maxConcurrentStreams: 4 });
  assert.equal(clients[0].pipelining, 4);
  d.factory("https://k8s:6443", {});
  assert.equal(clients[1].pipelining, 4);
});

test("maxStreamsPerConnection caps an h2 client's pipelining below the server's limit, never above it", () => {
  const table: [number, number, number][] = [
    // [server's maxConcurrentStreams, cap, pipelining]
    [250, 100, 100],
    [100, 100, 100],
    [4, 100, 4], // the server's smaller limit wins
    [8, 4, 4],
    [8, 1, 1],
  ];
  for (const [server, cap, expected] of table) {
    const { undici, clients } = fakeUndici(() => "h2");
    const d = h2Dispatch(undici, cap);
    d.factory("https://k8s:6443", {});
    const settings: Listener[] = [];
    connect(clients[0], { on: (_e: string, l: Listener) => settings.push(l) });
    for (const l of settings) l({ maxConcurrentStreams: server });
    assert.equal(clients[0].pipelining, expected, `${server} / ${cap}`);
    d.factory("https://k8s:6443", {});
    assert.equal(clients[1].pipelining, expected, `next client, ${server} / ${cap}`);
  }
  // Without the session: the fallback, capped too.
  const { undici, clients } = fakeUndici(() => "h2");
  h2Dispatch(undici, 7).factory("https://k8s:6443", {});
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 7);
});

test("without undici's session (an internal that moved), an h2 client gets the fixed fallback", () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  d.factory("https://k8s:6443", {});
  connect(clients[0]);
  assert.equal(clients[0].pipelining, FALLBACK_MAX_STREAMS);
});

test("an HTTP/1.1 connection keeps pipelining 1, and so does the next client", () => {
  const { undici, clients } = fakeUndici(() => "http/1.1");
  const d = h2Dispatch(undici);
  d.factory("https://k8s:6443", {});
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 1);
  d.factory("https://k8s:6443", {});
  assert.equal(clients[1].pipelining, 1);
});

test("until the first connection says what it speaks, later requests wait; an abort ends the wait", async () => {
  const { undici, clients } = fakeUndici(() => "http/1.1");
  const d = h2Dispatch(undici);
  const order: string[] = [];
  let finishFirst!: () => void;
  const first = d.gate(
    "https://k8s:6443/a",
    undefined,
    () =>
      new Promise<void>((resolve) => (finishFirst = resolve)).then(() => void order.push("first")),
  );
  const second = d.gate(
    "https://k8s:6443/b",
    undefined,
    () => Promise.resolve(order.push("second")),
  );
  const ac = new AbortController();
  const third = d.gate("https://k8s:6443/c", ac.signal, () => Promise.resolve(order.push("third")));
  ac.abort(new Error("gave up"));
  await assert.rejects(third, /gave up/);
  await Promise.resolve();
  assert.deepEqual(order, []); // the second waits for the first
  d.factory("https://k8s:6443", {});
  connect(clients[0]); // HTTP/1.1 learned: the wait ends before the first request does
  await second;
  assert.deepEqual(order, ["second"]);
  finishFirst();
  await first;
  assert.deepEqual(order, ["second", "first"]);
});
