/**
 * HTTP/2 over undici `Client`s with one connection shared by many
 * requests, and another connection opened (never a request queued) when
 * the server's `SETTINGS_MAX_CONCURRENT_STREAMS` is reached, as Go's
 * HTTP/2 transport does without `StrictMaxConcurrentStreams`.
 *
 * undici 7's h2 `Client` takes one request at a time unless its
 * `pipelining` is raised (it defaults to 1, so `allowH2` alone opens a
 * connection per concurrent request); raised without bound, requests past
 * the server's limit wait inside the session, and a watch among them waits
 * forever. So each `Client` gets as `pipelining`:
 *
 * - 1 while it connects, and on h2 until its own connection's SETTINGS
 *   arrive (a limit learned on another connection is never assumed: servers
 *   behind one address may differ);
 * - on h2, that connection's `maxConcurrentStreams` (or the caller's cap,
 *   when smaller) from the session's `remoteSettings` (Node's public event;
 *   the session is found on the client by its symbol's description, the one
 *   undici internal used, and when it is absent a fixed 100);
 * - on HTTP/1.1, 1.
 *
 * Which connection a request goes to is chosen here, not by an undici
 * `Pool` (a `Pool` trusts each client's own busy flag, and a request it
 * hands to a client at its limit stays queued there behind watches that
 * never end): an open connection with room by its own SETTINGS (a server
 * advertising 0, draining, has none), else a client not connected and
 * carrying nothing (it connects again), else a new one.
 *
 * Requests pass a gate first, with Go's rule (it dials at most once per
 * address at a time): while the origin has no open h2 connection with a
 * free stream and a connection to it is being made, a request waits for
 * that connection instead of opening its own; when its SETTINGS arrive the
 * waiters go on (and share it). When the connection being made fails,
 * every waiter goes on at once, each making its own attempt (and failing
 * with its own error), never one at a time. Once the origin is known to
 * speak HTTP/1.1, requests pass at once.
 *
 * @module
 */

/** The undici constructors used here (all public). */
export interface UndiciH2 {
  Client: new (origin: string | URL, options: Record<string, unknown>) => UndiciClient;
  /** Makes the connect function a `Client` calls (TLS options in, a connector out). */
  buildConnector: (options: Record<string, unknown>) => unknown;
}

/** The part of an undici `Client` used here (all public). */
interface UndiciClient {
  pipelining: number;
  /** undici's `ClientStats`: `size` is the requests running or queued on it. */
  readonly stats?: { size?: number; connected?: boolean };
  dispatch(options: unknown, handler: unknown): boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  destroy?(): Promise<unknown>;
}

interface H2Session {
  on(
    event: "remoteSettings",
    listener: (settings: { maxConcurrentStreams?: number }) => void,
  ): unknown;
  /** Sends a PING; `callback` on its answer, or with an error. */
  ping?(callback: (err: Error | null) => void): boolean;
}

/** Streams assumed per connection when undici's session cannot be found (undici's and Node's default). */
export const FALLBACK_MAX_STREAMS = 100;

/** How long {@linkcode h2Dispatch} waits on a connection, in ms. */
export interface H2Timing {
  /**
   * For the server's first SETTINGS after the TLS handshake, before the
   * connection is given up (destroyed, its waiters let go to make their
   * own): undici's connect timeout ends with the handshake, and without this
   * a server that never sends them would hold every request to it at the
   * gate for good.
   */
  settingsTimeoutMs: number;
  /**
   * How long an open h2 connection may go without a byte from its server
   * before it is sent a PING (its health check).
   */
  pingIntervalMs: number;
  /**
   * For the PING's answer, or any byte, before the connection is given up.
   * A connection gone silent (half-open: a peer, NAT or load balancer that
   * dropped it without a word) carries every request to its server; without
   * this a watch cut by its idle deadline would watch again on the same dead
   * connection until TCP gives up (many minutes). client-go pings after 30 s
   * without a frame and waits 15 s, as here. Bytes that keep coming (a big
   * list on a slow link, where the answer queues behind them) are proof
   * enough.
   */
  pingTimeoutMs: number;
  /** The clock, in ms (a PING's wait that ended late by it is given a second one). */
  now: () => number;
}

/** {@linkcode H2Timing}'s defaults. */
export const H2_TIMING_DEFAULTS: Readonly<H2Timing> = Object.freeze({
  settingsTimeoutMs: 10_000,
  pingIntervalMs: 30_000,
  pingTimeoutMs: 15_000,
  now: Date.now,
});

/** Stops `conn`'s health check: its PINGs and the waits for their answers. */
function stopHealthCheck(conn: Conn): void {
  clearInterval(conn.pingTimer);
  for (const t of conn.judges) clearTimeout(t);
  conn.judges.clear();
}

/** `timer`, not holding the process open (Node; elsewhere as it is). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/**
 * What a PING's wait, ended, says of its connection: `"keep"` it (answered,
 * or bytes came from it meanwhile: `heard`), `"wait-again"` (neither, but
 * the timer ran late, by a second or a tenth of the timeout: the process was
 * busy, a long handler or a big parse, and the answer may be waiting unread;
 * once per PING: `patient`), else `"give-up"`.
 */
export function pingVerdict(
  p: { answered: boolean; heard: boolean; patient: boolean; lateMs: number; pingTimeoutMs: number },
): "keep" | "wait-again" | "give-up" {
  if (p.answered || p.heard) return "keep";
  if (p.patient && p.lateMs > Math.min(1_000, p.pingTimeoutMs / 10)) return "wait-again";
  return "give-up";
}

/** The bytes `socket` has read so far (its `bytesRead`), or undefined where it has none. */
function bytesReadOf(socket: unknown): number | undefined {
  const n = (socket as { bytesRead?: unknown } | undefined)?.bytesRead;
  return typeof n === "number" ? n : undefined;
}

/** What a request gets once the dispatch is closed (before or while it waits). */
function closedError(): TypeError {
  return new TypeError("fetch: the connection is closed");
}

/** One client (connection) of an origin. */
interface Conn {
  client: UndiciClient;
  /** idle: not connected (new, reset, failed); connecting: TCP/TLS or h2 SETTINGS under way; open: usable. */
  phase: "idle" | "connecting" | "open";
  /** The last connection's ALPN result. */
  protocol?: "h2" | "http/1.1";
  /** On h2: streams this connection takes (0: none, the server is draining). */
  limit: number;
  /** The last connection's socket. */
  socket?: { destroyed?: boolean };
  /** Destroyed by `close`, or given up (no SETTINGS in time). */
  closed?: boolean;
  /** The wait for the server's first SETTINGS on the current connection. */
  settingsTimer?: ReturnType<typeof setTimeout>;
  /** The current connection's health check (a PING every `pingIntervalMs`). */
  pingTimer?: ReturnType<typeof setInterval>;
  /** The waits for PING answers under way. */
  judges: Set<ReturnType<typeof setTimeout>>;
  /** The socket of a TLS handshake under way. */
  handshaking?: { destroy?: () => void };
}

/** Whether the conn's connection is up (undici's stats; its socket not destroyed, before undici's events say so). */
function isAlive(conn: Conn): boolean {
  return conn.client.stats?.connected !== false && conn.socket?.destroyed !== true;
}

/** A request let through the gate and not yet handed to a client. */
interface Pass {
  /** Let through to open a connection (nobody was connecting). */
  launch: boolean;
  dispatched: boolean;
}

/** A request waiting at the gate; `go(true)` lets it pass without re-checking (the connection it awaited failed). */
type Waiter = (bypass: boolean) => void;

/** What is known of one origin. */
interface OriginState {
  /** The last connection's protocol; undefined until one said. */
  protocol?: "h2" | "http/1.1";
  conns: Set<Conn>;
  /** Requests let through, not yet dispatched to a client (undici's fetch dispatches a few ticks later). */
  transit: Pass[];
  waiters: Set<Waiter>;
}

/** The per-origin Pools and the gate requests pass through. */
export interface H2Dispatch {
  /**
   * Runs `request` with a dispatcher for the origin (it picks the
   * connection), now or once a connection being made to the origin is
   * ready (or failed).
   */
  gate<T>(
    url: string,
    signal: AbortSignal | null | undefined,
    request: (dispatcher: unknown) => Promise<T>,
  ): Promise<T>;
  /** Fails every request waiting at the gate, and every later one, with a `TypeError`; destroys the clients (ending what runs on them). */
  close(): Promise<void>;
}

/**
 * The server's `SETTINGS_MAX_CONCURRENT_STREAMS` as a number of streams:
 * 0 stays 0 (the connection takes none); absent or invalid: the fallback.
 */
export function streamsFrom(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    return FALLBACK_MAX_STREAMS;
  }
  return Math.min(Math.floor(value), 2 ** 31 - 1);
}

/** Whether the gate lets a request through now, and whether it will be the one opening a connection. */
export function gateDecision(
  state: {
    protocol?: "h2" | "http/1.1";
    /** Free streams on open h2 connections. */
    spare: number;
    /** Requests already let through, not yet dispatched. */
    inTransit: number;
    /** A connection being made, or a request let through to make one. */
    connecting: boolean;
  },
): "go" | "launch" | "wait" {
  if (state.protocol === "http/1.1") return "go";
  if (state.spare > state.inTransit) return "go";
  return state.connecting ? "wait" : "launch";
}

/**
 * Makes the h2 machinery over `undici`'s constructors: `Client`s per origin
 * made with `poolOptions` (TLS in `connect`, timeouts); `maxStreams` (the
 * `maxStreamsPerConnection` option) caps each connection's streams below
 * the server's limit when smaller. Default: the server's limit.
 *
 * The clients are kept here for the life of the connection, not by an
 * `Agent`: an `Agent` closes and forgets an origin's `Pool` once all its
 * connections dropped (a reset), and the requests after it would land on a
 * new one knowing nothing of the connection being made in the old one.
 */
export function h2Dispatch(
  undici: UndiciH2,
  maxStreams = Infinity,
  poolOptions: Record<string, unknown> = {},
  timing: Partial<H2Timing> = {},
): H2Dispatch {
  const { settingsTimeoutMs, pingIntervalMs, pingTimeoutMs, now } = {
    ...H2_TIMING_DEFAULTS,
    ...timing,
  };
  const origins = new Map<string, OriginState>();
  let closed = false;
  // Each Client connects through this (undici's own TLS connector, with ALPN offering h2), wrapped
  // per client to see each connection's protocol.
  const connectOptions = (poolOptions.connect ?? {}) as Record<string, unknown>;
  const connector = undici.buildConnector({ allowH2: true, ...connectOptions });
  const stateOf = (origin: string | URL): OriginState => {
    const key = typeof origin === "string" ? new URL(origin).origin : origin.origin;
    let s = origins.get(key);
    if (!s) origins.set(key, s = { conns: new Set(), transit: [], waiters: new Set() });
    return s;
  };
  /** Wakes every waiter: each re-checks (`bypass` false) or passes (`bypass` true). */
  const wake = (s: OriginState, bypass = false) => {
    const waiters = [...s.waiters];
    s.waiters.clear();
    for (const go of waiters) go(bypass);
  };
  const spareOf = (s: OriginState): number => {
    let spare = 0;
    for (const c of s.conns) {
      if (c.phase !== "open" || c.protocol !== "h2" || !isAlive(c)) continue;
      spare += Math.max(0, Math.min(c.limit, maxStreams) - (c.client.stats?.size ?? 0));
    }
    return spare;
  };
  const connecting = (s: OriginState): boolean =>
    s.transit.some((p) => p.launch) || [...s.conns].some((c) => c.phase === "connecting");

  const makeClient = (
    origin: string | URL,
    options: Record<string, unknown>,
  ): UndiciClient => {
    const s = stateOf(origin);
    const conn = { phase: "idle", limit: 0, judges: new Set() } as unknown as Conn;
    const failed = () => {
      const was = conn.phase;
      conn.phase = "idle";
      // The connection being made failed: every waiter goes on at once (each its own attempt).
      if (was === "connecting") wake(s, true);
      else wake(s);
    };
    const base = connector;
    const connect = typeof base === "function"
      ? (opts: unknown, cb: (err: Error | null, socket: unknown) => void) => {
        conn.phase = "connecting";
        conn.socket = undefined;
        conn.client.pipelining = 1;
        // (kept until its handshake ends: close() destroys it, undici's destroy leaves it to its timeout)
        const made = base(
          opts,
          (err: Error | null, socket: { alpnProtocol?: string | false } | null) => {
            conn.handshaking = undefined;
            if (socket) conn.socket = socket as { destroyed?: boolean };
            if (err || !socket) failed();
            else if (socket.alpnProtocol !== "h2") {
              conn.protocol = s.protocol = "http/1.1";
              conn.phase = "open";
              wake(s);
            } else conn.protocol = "h2";
            cb(err, socket);
          },
        );
        if (conn.closed) (made as { destroy?: () => void } | undefined)?.destroy?.();
        else conn.handshaking = made as { destroy?: () => void } | undefined;
        return made;
      }
      : base;
    const c = new undici.Client(origin, { ...options, connect, pipelining: 1 });
    conn.client = c;
    s.conns.add(conn);
    c.on("connect", () => {
      if (conn.protocol === "http/1.1") return;
      const session = http2SessionOf(c);
      if (conn.protocol === undefined && !session) { // no ALPN seen (a custom connector): HTTP/1.1
        conn.protocol = s.protocol = "http/1.1";
        conn.phase = "open";
        wake(s);
        return;
      }
      conn.protocol = s.protocol = "h2";
      clearTimeout(conn.settingsTimer);
      stopHealthCheck(conn);
      const opened = (limit: number) => {
        clearTimeout(conn.settingsTimer);
        conn.limit = limit;
        conn.phase = "open";
        c.pipelining = Math.max(1, Math.min(limit, maxStreams));
        wake(s);
      };
      if (!session) return opened(FALLBACK_MAX_STREAMS);
      session.on(
        "remoteSettings",
        (settings) => opened(streamsFrom(settings?.maxConcurrentStreams)),
      );
      // This client is given up for good (never picked again), its requests fail as from a reset,
      // and the waiters go on; unless the session has changed since (a reconnect).
      const giveUp = () => {
        if (conn.closed || http2SessionOf(c) !== session) return;
        conn.closed = true;
        s.conns.delete(conn);
        clearTimeout(conn.settingsTimer);
        stopHealthCheck(conn);
        failed();
        c.destroy?.().catch(() => {});
      };
      // No SETTINGS in time: the waiters go on at once, each to its own attempt.
      conn.settingsTimer = unref(setTimeout(() => {
        if (conn.phase === "connecting") giveUp();
      }, settingsTimeoutMs));
      // Health check: a PING unanswered in time means a dead connection.
      if (typeof session.ping !== "function") return;
      let lastRead = bytesReadOf(conn.socket);
      conn.pingTimer = unref(setInterval(() => {
        if (conn.phase !== "open" || conn.closed) return;
        const read = bytesReadOf(conn.socket);
        if (read !== lastRead) return void (lastRead = read); // heard from since the last tick
        let answered = false;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const wait = (ms: number) => conn.judges.add(timer = unref(setTimeout(judge, ms)));
        const due = now() + pingTimeoutMs;
        let patient = true;
        let lastLook = false;
        const judge = () => {
          conn.judges.delete(timer!);
          const heard = read !== undefined && bytesReadOf(conn.socket) !== read;
          const lateMs = now() - due;
          const verdict = pingVerdict({ answered, heard, patient, lateMs, pingTimeoutMs });
          if (verdict === "give-up" && !lastLook) {
            // one more turn of the event loop first: what the socket holds unread is read then
            lastLook = true;
            wait(0);
          } else if (verdict === "give-up") giveUp();
          else if (verdict === "wait-again") {
            patient = false;
            wait(pingTimeoutMs);
          }
        };
        try {
          session.ping!((err) => {
            answered = !err;
            lastRead = bytesReadOf(conn.socket); // (its answer is no news of the connection)
            if (answered && timer !== undefined) {
              clearTimeout(timer);
              conn.judges.delete(timer);
            }
          });
        } catch {
          return; // (a session closing: its disconnect follows)
        }
        if (!answered) wait(pingTimeoutMs);
      }, pingIntervalMs));
    });
    c.on("disconnect", () => {
      // The old socket's close can come after a new connect began: only the current socket's counts.
      // (no socket yet: its TLS handshake is under way; a live one: not the one that closed).
      if (!conn.socket || conn.socket.destroyed === false) return;
      clearTimeout(conn.settingsTimer);
      stopHealthCheck(conn);
      conn.phase = "idle";
      wake(s);
    });
    c.on("connectionError", failed);
    c.on("drain", () => wake(s));
    return c;
  };

  /** Room for one more request on `conn` (its own limit, capped; never a draining or full one). */
  const hasRoom = (conn: Conn): boolean =>
    conn.phase === "open" && isAlive(conn) &&
    (conn.client.stats?.size ?? 0) <
      (conn.protocol === "h2" ? Math.min(conn.limit, maxStreams) : 1);
  /**
   * The client a request goes to, chosen here rather than by an undici
   * `Pool`: an open connection with room by its own SETTINGS (h2) or idle
   * (HTTP/1.1); else a client not connected and not carrying anything
   * (it connects again); else a new one. A request is never queued on a
   * connection at its limit (undici would hold it there behind watches that
   * never end).
   */
  const pick = (origin: string): UndiciClient => {
    const s = stateOf(origin);
    for (const conn of s.conns) if (hasRoom(conn)) return conn.client;
    for (const conn of s.conns) {
      if (conn.phase === "idle" && (conn.client.stats?.size ?? 0) === 0 && !conn.closed) {
        return conn.client;
      }
    }
    return makeClient(origin, { ...poolOptions, allowH2: true });
  };
  /** One request's dispatcher: its dispatch ends the request's transit through the gate. */
  const dispatcherFor = (origin: string, pass: Pass | undefined) => ({
    dispatch(opts: unknown, handler: unknown): boolean {
      if (closed) throw closedError(); // (closed after the gate: no new connection after close)
      const s = stateOf(origin);
      if (pass && !pass.dispatched) {
        pass.dispatched = true;
        const i = s.transit.indexOf(pass);
        if (i >= 0) s.transit.splice(i, 1);
      }
      const queued = pick(origin).dispatch(opts, handler);
      if (pass?.launch) wake(s);
      return queued;
    },
  });
  return {
    async gate(url, signal, request) {
      if (closed) throw closedError();
      const s = stateOf(url);
      const origin = new URL(url).origin;
      let launch = false;
      while (!closed) {
        const decision = gateDecision({
          protocol: s.protocol,
          spare: spareOf(s),
          inTransit: s.transit.filter((p) => !p.launch).length,
          connecting: connecting(s),
        });
        if (decision !== "wait") {
          launch = decision === "launch";
          break;
        }
        if (await waitOrAbort(s, signal)) break; // bypass: the awaited connection failed
      }
      if (closed) throw closedError();
      const pass: Pass = { launch, dispatched: false };
      s.transit.push(pass);
      try {
        return await request(dispatcherFor(origin, pass));
      } finally {
        if (!pass.dispatched) {
          const i = s.transit.indexOf(pass);
          if (i >= 0) s.transit.splice(i, 1);
          wake(s);
        }
      }
    },
    async close() {
      closed = true;
      const clients: UndiciClient[] = [];
      for (const s of origins.values()) {
        for (const conn of s.conns) {
          conn.closed = true;
          clearTimeout(conn.settingsTimer);
          stopHealthCheck(conn);
          conn.handshaking?.destroy?.();
          clients.push(conn.client);
        }
        wake(s, true);
      }
      await Promise.all(clients.map((c) => c.destroy?.().catch(() => {})));
    },
  };
}

/** undici's h2 session of a connected client, found by its symbol's description; undefined when absent. */
function http2SessionOf(client: unknown): H2Session | undefined {
  const c = client as Record<symbol, unknown>;
  const symbol = Object.getOwnPropertySymbols(c).find((s) => s.description === "http2Session");
  const session = symbol ? c[symbol] as H2Session | undefined : undefined;
  return session && typeof session.on === "function" ? session : undefined;
}

/** Waits for the next change at the origin; true when told to pass. Rejects with `signal.reason` on abort (listener removed). */
function waitOrAbort(s: OriginState, signal: AbortSignal | null | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      signal?.removeEventListener("abort", onAbort);
      s.waiters.delete(go);
      reject(signal?.reason);
    };
    const go: Waiter = (bypass) => {
      signal?.removeEventListener("abort", onAbort);
      resolve(bypass);
    };
    s.waiters.add(go);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
