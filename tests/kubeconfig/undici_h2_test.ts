import assert from "node:assert/strict";
import {
  FALLBACK_MAX_STREAMS,
  gateDecision,
  h2Dispatch,
  pingVerdict,
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

/** A stand-in for undici's module: Clients recorded as made, a connector answering `alpn` when told. */
function fakeUndici(alpn: () => string | false) {
  const clients: FakeClient[] = [];
  const connector = (_o: unknown, cb: (e: Error | null, s: unknown) => void) =>
    answers.push((e) => cb(e, e ? null : { alpnProtocol: alpn(), destroyed: false }));
  class RecordedClient extends FakeClient {
    constructor(origin: string | URL, options: Record<string, unknown>) {
      super(origin, options);
      clients.push(this);
    }
  }
  return {
    undici: { Client: RecordedClient, buildConnector: () => connector } as never,
    clients,
  };
}

/** Sends one request through `d`'s gate and its dispatcher (a client is picked or made); resolves once dispatched. */
async function dispatchOne(d: ReturnType<typeof h2Dispatch>, path = "/x"): Promise<void> {
  await d.gate(`${ORIGIN}${path}`, undefined, (dispatcher) => {
    (dispatcher as { dispatch(o: unknown, h: unknown): boolean }).dispatch({}, {});
    return Promise.resolve();
  });
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

test("an h2 client's pipelining follows its own connection's maxConcurrentStreams; a new client starts at 1", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  await dispatchOne(d);
  assert.equal(clients.length, 1);
  assert.equal(clients[0].pipelining, 1); // unknown protocol: one request
  const a = session();
  connect(clients[0], a.session);
  assert.equal(clients[0].pipelining, 1); // until the SETTINGS arrive
  a.send(4);
  assert.equal(clients[0].pipelining, 4);
  clients[0].size = 4; // full: the next request makes another client
  await dispatchOne(d);
  assert.equal(clients.length, 2);
  assert.equal(clients[1].pipelining, 1); // not the limit learned on the first connection
  const b = session();
  connect(clients[1], b.session);
  b.send(2);
  assert.equal(clients[1].pipelining, 2);
  // A reconnect starts at 1 again.
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 1);
  await d.close(); // (its wait for the SETTINGS ends)
});

test("a request goes to an open connection with room by its own SETTINGS, never to one at its limit or draining", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  await dispatchOne(d);
  const a = session();
  connect(clients[0], a.session);
  a.send(2); // clients[0] carries 1 of 2
  await dispatchOne(d);
  assert.equal(clients.length, 1);
  assert.equal(clients[0].size, 2);
  await dispatchOne(d); // at its limit: a new connection, not a request queued behind the others
  assert.equal(clients.length, 2);
  assert.equal(clients[1].size, 1);
  clients[0].size = 1; // a stream ended: room again
  const b = session();
  connect(clients[1], b.session);
  b.send(5);
  await dispatchOne(d);
  assert.equal(clients[0].size, 2); // the oldest connection with room
  a.send(0); // draining: no room at all
  clients[0].size = 0;
  await dispatchOne(d);
  assert.equal(clients[0].size, 0);
  assert.equal(clients[1].size, 2);
});

test("maxStreamsPerConnection caps an h2 client's pipelining below the server's limit, never above it", async () => {
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
    await dispatchOne(d);
    const a = session();
    connect(clients[0], a.session);
    a.send(server);
    assert.equal(clients[0].pipelining, expected, `${server} / ${cap}`);
  }
  // Without the session: the fallback, capped too.
  const { undici, clients } = fakeUndici(() => "h2");
  await dispatchOne(h2Dispatch(undici, 7));
  connect(clients[0]);
  assert.equal(clients[0].pipelining, 7);
});

test("without undici's session (an internal that moved), an h2 client gets the fixed fallback", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  await dispatchOne(h2Dispatch(undici));
  connect(clients[0]);
  assert.equal(clients[0].pipelining, FALLBACK_MAX_STREAMS);
});

test("an HTTP/1.1 connection keeps pipelining 1, and then requests pass the gate at once", async () => {
  const { undici, clients } = fakeUndici(() => "http/1.1");
  const d = h2Dispatch(undici);
  await dispatchOne(d);
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
  const first = d.gate(`${ORIGIN}/a`, undefined, (dispatcher) => {
    (dispatcher as FakeClient).dispatch(); // a new client, which starts connecting
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
  const first = d.gate(`${ORIGIN}/a`, undefined, (dispatcher) => {
    (dispatcher as FakeClient).dispatch();
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

test("a connection whose SETTINGS do not come in time is given up: destroyed, never picked again, its waiters go on at once", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici, Infinity, {}, { settingsTimeoutMs: 0 });
  const destroyed: number[] = [];
  const attempts: string[] = [];
  const first = d.gate(`${ORIGIN}/a`, undefined, (dispatcher) => {
    (dispatcher as FakeClient).dispatch();
    beginConnect(clients[0]);
    (clients[0] as unknown as { destroy(): Promise<void> }).destroy = () => {
      destroyed.push(0);
      return Promise.resolve();
    };
    attempts.push("a");
    return Promise.resolve();
  });
  await first;
  const waiters = ["b", "c"].map((name) =>
    d.gate(`${ORIGIN}/${name}`, undefined, (dispatcher) => {
      (dispatcher as FakeClient).dispatch();
      attempts.push(name);
      return Promise.resolve();
    })
  );
  await Promise.resolve();
  assert.deepEqual(attempts, ["a"]); // waiting for the first connection's SETTINGS
  answers.pop()!(null);
  (clients[0] as unknown as Record<symbol, unknown>)[Symbol("http2Session")] = session().session;
  clients[0].connected = true;
  clients[0].emit("connect"); // TLS done, h2 chosen; the SETTINGS never come
  // (the wait's timer does not hold the process open: poll on one that does)
  for (let i = 0; attempts.length < 3 && i < 2_000; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  assert.deepEqual(attempts, ["a", "b", "c"]);
  await Promise.all(waiters);
  assert.deepEqual(attempts, ["a", "b", "c"]);
  assert.deepEqual(destroyed, [0]);
  assert.ok(clients.length > 1, "the waiters went to new clients");
  assert.ok(!clients.slice(1).some((c) => c === clients[0]));
});

test("after close() a request is refused with a TypeError and makes no client, and so is one waiting at the gate", async () => {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici);
  const first = d.gate(`${ORIGIN}/a`, undefined, (dispatcher) => {
    (dispatcher as FakeClient).dispatch();
    beginConnect(clients[0]);
    return Promise.resolve();
  });
  await first;
  let sent = false;
  const waiting = d.gate(`${ORIGIN}/b`, undefined, () => Promise.resolve(void (sent = true)));
  await Promise.resolve();
  await d.close();
  await assert.rejects(waiting, (err) => err instanceof TypeError && /closed/.test(err.message));
  assert.equal(sent, false);
  await assert.rejects(d.gate(`${ORIGIN}/c`, undefined, () => Promise.resolve()), TypeError);
  // a dispatcher handed out before the close refuses too: no new connection after close
  let late: { dispatch(o: unknown, h: unknown): boolean } | undefined;
  const d2 = h2Dispatch(undici);
  const pending = d2.gate(`${ORIGIN}/d`, undefined, (dispatcher) => {
    late = dispatcher as typeof late;
    return new Promise<void>(() => {});
  });
  await Promise.resolve();
  const made = clients.length;
  await d2.close();
  assert.throws(() => late!.dispatch({}, {}), TypeError);
  assert.equal(clients.length, made);
  void pending;
});

/**
 * An open h2 connection on a fake client whose session answers each PING at
 * once, or holds it while `hold(n)` says the n-th (from 0) is to be held;
 * held answers are in `held`.
 */
async function pinged(timing: Parameters<typeof h2Dispatch>[3], hold: (n: number) => boolean) {
  const { undici, clients } = fakeUndici(() => "h2");
  const d = h2Dispatch(undici, Infinity, {}, timing);
  await dispatchOne(d);
  const held: ((err: Error | null) => void)[] = [];
  const settings: Listener[] = [];
  let sent = 0;
  const fakeSession = {
    on: (_e: string, l: Listener) => settings.push(l),
    ping: (cb: (err: Error | null) => void) => {
      if (hold(sent++)) held.push(cb);
      else queueMicrotask(() => cb(null));
      return true;
    },
  };
  let destroyed = 0;
  (clients[0] as unknown as { destroy(): Promise<void> }).destroy = () => {
    destroyed++;
    return Promise.resolve();
  };
  connect(clients[0], fakeSession);
  for (const l of settings) l({ maxConcurrentStreams: 10 });
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 2_000 && !cond(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  };
  return { d, held, sent: () => sent, destroyed: () => destroyed, until };
}

test("h2 health check: PINGs answered keep the connection; one unanswered within pingTimeoutMs gives it up", async () => {
  const kept = await pinged({ pingIntervalMs: 2, pingTimeoutMs: 10 }, () => false);
  await kept.until(() => kept.sent() >= 20);
  assert.equal(kept.destroyed(), 0);
  await kept.d.close();
  const dead = await pinged({ pingIntervalMs: 2, pingTimeoutMs: 10 }, (n) => n >= 3);
  await dead.until(() => dead.destroyed() > 0);
  assert.equal(dead.destroyed(), 1, "given up once");
  await dead.d.close();
});

test("pingVerdict: keep a connection that answered or sent bytes; a wait that ended late waits once more; else give up", () => {
  const table: [boolean, boolean, boolean, number, "keep" | "wait-again" | "give-up"][] = [
    // answered, heard (bytes came), patient, lateMs (timeout 15000)
    [true, false, true, 0, "keep"],
    [true, false, false, 60_000, "keep"],
    [false, true, true, 0, "keep"], // a big list on a slow link: the answer queues behind its data
    [false, false, true, 0, "give-up"], // on time, nothing came: dead
    [false, false, true, 1_000, "give-up"], // a second late at most: on time enough
    [false, false, true, 1_001, "wait-again"], // the process was busy: the answer may be unread
    [false, false, true, 120_000, "wait-again"],
    [false, false, false, 120_000, "give-up"], // once per PING
  ];
  for (const [answered, heard, patient, lateMs, expected] of table) {
    assert.equal(
      pingVerdict({ answered, heard, patient, lateMs, pingTimeoutMs: 15_000 }),
      expected,
      JSON.stringify({ answered, heard, patient, lateMs }),
    );
  }
  // with a short timeout, a tenth of it
  assert.equal(
    pingVerdict({ answered: false, heard: false, patient: true, lateMs: 51, pingTimeoutMs: 500 }),
    "wait-again",
  );
  assert.equal(
    pingVerdict({ answered: false, heard: false, patient: true, lateMs: 50, pingTimeoutMs: 500 }),
    "give-up",
  );
});
