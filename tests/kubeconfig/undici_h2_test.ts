import assert from "node:assert/strict";
import {
  FALLBACK_MAX_STREAMS,
  gateDecision,
  h2Dispatch,
  streamsFrom,
} from "../../src/kubeconfig/_undici_h2.ts";
import { test } from "../_test.ts";

type Listener = (...args: unknown[]) => void;

/** A stand-in for undici's Client: records its options, listeners and dispatches. */
class FakeClient {
  pipelining: number;
  size = 0;
  connected = false;
  readonly options: Record<string, unknown>;
  readonly listeners = new Map<string, Listener[]>();
  constructor(_origin: string | URL, options: Record<string, unknown>) {
    this.options = options;
    this.pipelining = options.pipelining as number;
  }
  get stats() {
    return { size: this.size, connected: this.connected };
  }
  dispatch() {
    this.size++;
    return true;
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
    readonly addClient: () => FakeClient;
    constructor(origin: string | URL, options: Record<string, unknown>) {
      (this as unknown as Record<symbol, boolean>)[Symbol("needDrain")] = false; // undici's Pool's mark
      const connect = (_o: unknown, cb: (e: Error | null, s: unknown) => void) =>
        answers.push((e) => cb(e, e ? null : { alpnProtocol: alpn(), destroyed: false }));
      const factory = options.factory as (o: string | URL, opts: unknown) => FakeClient;
      this.addClient = () => {
        const c = factory(origin, { connect });
        clients.push(c);
        return c;
      };
      this.addClient();
    }
  }
  return { undici: { Pool: FakePool, Client: FakeClient } as never, clients };
}

/** Connector calls not answered yet, latest last: `answers.pop()!(null)` connects, `(error)` fails. */
const answers: ((e: Error | null) => void)[] = [];

/** Starts `client`'s connect (as undici does on its first request); the connector answers later. */
function beginConnect(client: FakeClient) {
  (client.options.connect as (o: unknown, cb: () => void) => void)({}, () => {});
}

/** Connects `client` (its connector answers at once), with `session` as undici's h2 session when given. */
function connect(client: FakeClient, session?: unknown) {
  beginConnect(client);
  answers.pop()!(null);
  if (session) (client as unknown as Record<symbol, unknown>)[Symbol("http2Session")] = session;
  client.connected = true;
  client.emit("connect");
}

/** A session whose remoteSettings listeners are collected. */
function session() {
  const settings: Listener[] = [];
  return {
    session: { on: (_e: string, l: Listener) => settings.push(l) },
    send: (maxConcurrentStreams: number) => {
      for (const l of settings) l({ maxConcurrentStreams });
    },
  };
}

const ORIGIN = "https://k8s:6443";

test("streamsFrom: the server's SETTINGS value as a number of streams (0 stays 0: none)", () => {
  const table: [unknown, number][] = [
    [4, 4],
    [1000, 1000],
    [250.7, 250],
    [2 ** 32 - 1, 2 ** 31 - 1], // "unlimited"
    [0, 0], // a draining server takes no stream on this connection
    [undefined, FALLBACK_MAX_STREAMS],
    [-1, FALLBACK_MAX_STREAMS],
    [Number.NaN, FALLBACK_MAX_STREAMS],
  ];
  for (const [value, expected] of table) assert.equal(streamsFrom(value), expected, `${value}`);
});

test("gateDecision: go with a free stream or on HTTP/1.1, wait while a connection is being made, else open one", () => {
  const table: [Parameters<typeof gateDecision>[0], string][] = [
    [{ protocol: "http/1.1", spare: 0, inTransit: 5, connecting: true }, "go"],
    [{ protocol: "h2", spare: 3, inTransit: 2, connecting: true }, "go"],
    [{ protocol: "h2", spare: 3, inTransit: 3, connecting: true }, "wait"], // the free streams are taken
    [{ protocol: "h2", spare: 3, inTransit: 3, connecting: false }, "launch"],
    [{ protocol: "h2", spare: 0, inTransit: 0, connecting: true }, "wait"],
    [{ protocol: "h2", spare: 0, inTransit: 0, connecting: false }, "launch"],
    [{ spare: 0, inTransit: 0, connecting: false }, "launch"], // the first request to an origin
    [{ spare: 0, inTransit: 0, connecting: true }, "wait"],
  ];
  for (const [state, expected] of table) {
    assert.equal(gateDecision(state), expected, JSON.stringify(state));
  }
});

test("an h2 client's pipelining follows its own connection's maxConcurrentStreams; a new client starts at 1", () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  const pool = d.pool(ORIGIN) as { addClient(): FakeClient };
  assert.equal(clients[0].pipelining, 1); // unknown protocol: one request
  const a = session();
  connect(clients[0], a.session);
  assert.equal(clients[0].pipelining, 1); // until the SETTINGS arrive
  a.send(4);
  assert.equal(clients[0].pipelining, 4);
  pool.addClient();
  assert.equal(clients[1].pipelining, 1); // not the limit learned on the first connection
  const b = session();
  connect(clients[1], b.session);
  b.send(2);
  assert.equal(clients[1].pipelining, 2);
  // A reconnect starts at 1 again.
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 1);
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
    d.pool(ORIGIN);
    const a = session();
    connect(clients[0], a.session);
    a.send(server);
    assert.equal(clients[0].pipelining, expected, `${server} / ${cap}`);
  }
  // Without the session: the fallback, capped too.
  const { undici, clients } = fakeUndici(() => "h2");
  h2Dispatch(undici, 7).pool(ORIGIN);
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 7);
});

test("without undici's session (an internal that moved), an h2 client gets the fixed fallback", () => {
  const { undici, clients } = fakeUndici(() => "h2");
  h2Dispatch(undici).pool(ORIGIN);
  connect(clients[0]);
  assert.equal(clients[0].pipelining, FALLBACK_MAX_STREAMS);
});

test("a connection whose server advertises 0 streams is marked full to the Pool, and unmarked when it allows some", () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const pool = h2Dispatch(undici).pool(ORIGIN) as Record<symbol, unknown>;
  const mark = Object.getOwnPropertySymbols(pool).find((s) => s.description === "needDrain")!;
  const a = session();
  connect(clients[0], a.session);
  a.send(0);
  const client = clients[0] as unknown as Record<symbol, unknown>;
  assert.equal(client[mark], true); // the Pool skips it: the next request opens another connection
  assert.equal(clients[0].pipelining, 1); // undici reads 0 as 1; the mark keeps requests away
  a.send(10);
  assert.equal(client[mark], false);
  assert.equal(clients[0].pipelining, 10);
});

test("an HTTP/1.1 connection keeps pipelining 1, and then requests pass the gate at once", async () => {
  const { undici, clients } = fakeUndici(() => "http/1.1");
  const d = h2Dispatch(undici);
  d.pool(ORIGIN);
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 1);
  const order: number[] = [];
  await Promise.all(
    [1, 2, 3].map((i) => d.gate(`${ORIGIN}/${i}`, undefined, () => Promise.resolve(order.push(i)))),
  );
  assert.deepEqual(order, [1, 2, 3]);
});

/** An AbortSignal stand-in counting its listeners. */
class CountingSignal extends EventTarget {
  aborted = false;
  reason: unknown;
  listeners = 0;
  override addEventListener(...a: Parameters<EventTarget["addEventListener"]>) {
    this.listeners++;
    super.addEventListener(...a);
  }
  override removeEventListener(...a: Parameters<EventTarget["removeEventListener"]>) {
    this.listeners--;
    super.removeEventListener(...a);
  }
  abort(reason: unknown) {
    this.aborted = true;
    this.reason = reason;
    this.dispatchEvent(new Event("abort"));
  }
}

test("while a connection is being made, later requests wait for its SETTINGS; an abort ends a wait and removes its listener", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  const order: string[] = [];
  let finishFirst!: () => void;
  const first = d.gate(`${ORIGIN}/a`, undefined, () => {
    clients[0].dispatch(); // the Pool hands it to its client, which starts connecting
    beginConnect(clients[0]);
    return new Promise<void>((resolve) => (finishFirst = resolve)).then(() =>
      void order.push("first")
    );
  });
  const waiting = new CountingSignal();
  const second = d.gate(
    `${ORIGIN}/b`,
    waiting as unknown as AbortSignal,
    () => Promise.resolve(order.push("second")),
  );
  const aborted = new CountingSignal();
  const third = d.gate(
    `${ORIGIN}/c`,
    aborted as unknown as AbortSignal,
    () => Promise.resolve(order.push("third")),
  );
  await Promise.resolve();
  assert.equal(aborted.listeners, 1);
  aborted.abort(new Error("gave up"));
  await assert.rejects(third, /gave up/);
  assert.equal(aborted.listeners, 0);
  assert.deepEqual(order, []); // the second waits for the connection the first is making
  const a = session();
  answers.pop()!(null);
  (clients[0] as unknown as Record<symbol, unknown>)[Symbol("http2Session")] = a.session;
  clients[0].connected = true;
  clients[0].emit("connect");
  await Promise.resolve();
  assert.deepEqual(order, []); // connected, but its SETTINGS have not come
  a.send(10);
  await second;
  assert.deepEqual(order, ["second"]);
  assert.equal(waiting.listeners, 0);
  finishFirst();
  await first;
  assert.deepEqual(order, ["second", "first"]);
});

test("when the connection being made fails, every waiter goes on at once (each its own attempt)", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  const attempts: string[] = [];
  const first = d.gate(`${ORIGIN}/a`, undefined, () => {
    clients[0].dispatch();
    beginConnect(clients[0]);
    attempts.push("a");
    return new Promise<void>((_, reject) =>
      clients[0].on("connectionError", (_o, _t, e) => reject(e))
    );
  });
  const others = ["b", "c", "d", "e"].map((name) =>
    d.gate(`${ORIGIN}/${name}`, undefined, () => Promise.resolve(attempts.push(name)))
  );
  await Promise.resolve();
  assert.deepEqual(attempts, ["a"]); // one connection attempt at a time...
  const failure = new Error("connect ECONNRESET");
  answers.pop()!(failure);
  clients[0].emit("connectionError", ORIGIN, [clients[0]], failure);
  await assert.rejects(first, /ECONNRESET/);
  await Promise.all(others);
  // ...and when it fails, all four waiters went on together, without re-checking the gate.
  assert.deepEqual(attempts, ["a", "b", "c", "d", "e"]);
});
