/**
 * HTTP/2 over an undici `Agent` with one connection shared by many
 * requests, and another connection opened (never a request queued) when
 * the server's `SETTINGS_MAX_CONCURRENT_STREAMS` is reached, as Go's
 * HTTP/2 transport does without `StrictMaxConcurrentStreams`.
 *
 * undici 7's h2 `Client` takes one request at a time unless its
 * `pipelining` is raised (it defaults to 1, so `allowH2` alone opens a
 * connection per concurrent request); raised without bound, requests past
 * the server's limit wait inside the session, and a watch among them waits
 * forever. So each `Client` (made through the `Agent`'s and `Pool`'s
 * public `factory` options) gets as `pipelining`:
 *
 * - 1 until its connection's protocol is known (the ALPN result, from a
 *   wrapper around its public `connect` function);
 * - on h2, the server's `maxConcurrentStreams` (or the caller's cap, when
 *   smaller) from the session's
 *   `remoteSettings` (Node's public event; the session is found on the
 *   client by its symbol's description, the one undici internal used, and
 *   when it is absent a fixed 100); a new connection to an origin already
 *   known to speak h2 starts at the value learned there;
 * - on HTTP/1.1, 1 (undici then opens one connection per request in flight).
 *
 * The `Pool` sees a client at its limit as busy and dispatches to, or
 * opens, another. Until the first connection to an origin has said what it
 * speaks, requests to that origin wait (the first goes ahead), so that a
 * burst of informers starting together shares one connection instead of
 * opening one each.
 *
 * @module
 */

/** The undici constructors used here (all public). */
export interface UndiciH2 {
  Pool: new (origin: string | URL, options: Record<string, unknown>) => unknown;
  Client: new (origin: string | URL, options: Record<string, unknown>) => UndiciClient;
}

/** The part of an undici `Client` used here. */
interface UndiciClient {
  pipelining: number;
  on(event: "connect", listener: () => void): unknown;
}

interface H2Session {
  on(
    event: "remoteSettings",
    listener: (settings: { maxConcurrentStreams?: number }) => void,
  ): unknown;
}

/** Streams assumed per connection when undici's session cannot be found (undici's and Node's default). */
export const FALLBACK_MAX_STREAMS = 100;

/** What is known of one origin. */
interface OriginState {
  /** The last connection's protocol; undefined until one said. */
  protocol?: "h2" | "http/1.1";
  /** On h2: the server's last advertised stream limit. */
  streams?: number;
  /** Set while the first connection is being made: later requests wait for it. */
  probe?: { done: Promise<void>; release: () => void };
}

/** The `factory` for the Agent, and the gate requests pass through. */
export interface H2Dispatch {
  /** The Agent's `factory` option. */
  factory: (origin: string | URL, options: Record<string, unknown>) => unknown;
  /** Runs `request` now, or once the origin's first connection has said what it speaks. */
  gate<T>(
    origin: string,
    signal: AbortSignal | null | undefined,
    request: () => Promise<T>,
  ): Promise<T>;
}

/** Clamps a SETTINGS value to a usable pipelining factor. */
export function streamsFrom(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1) {
    return FALLBACK_MAX_STREAMS;
  }
  return Math.min(Math.floor(value), 2 ** 31 - 1);
}

/**
 * Makes the per-Agent h2 machinery over `undici`'s constructors; `maxStreams`
 * (the `maxStreamsPerConnection` option) caps each connection's streams
 * below the server's limit when smaller. Default: the server's limit.
 */
export function h2Dispatch(undici: UndiciH2, maxStreams = Infinity): H2Dispatch {
  const origins = new Map<string, OriginState>();
  const stateOf = (origin: string | URL): OriginState => {
    const key = typeof origin === "string" ? new URL(origin).origin : origin.origin;
    let s = origins.get(key);
    if (!s) origins.set(key, s = {});
    return s;
  };
  const learned = (s: OriginState) => {
    const probe = s.probe;
    s.probe = undefined;
    probe?.release();
  };

  const makeClient = (origin: string | URL, options: Record<string, unknown>): unknown => {
    const s = stateOf(origin);
    const made: { client?: UndiciClient } = {}; // set once constructed; connects come later
    let alpn: "h2" | "http/1.1" | undefined;
    const base = options.connect;
    const connect = typeof base === "function"
      ? (opts: unknown, cb: (err: Error | null, socket: unknown) => void) =>
        base(opts, (err: Error | null, socket: { alpnProtocol?: string | false } | null) => {
          if (!err && socket) {
            alpn = socket.alpnProtocol === "h2" ? "h2" : "http/1.1";
            if (alpn === "http/1.1") {
              s.protocol = "http/1.1";
              s.streams = undefined;
              if (made.client) made.client.pipelining = 1;
              learned(s);
            }
          }
          cb(err, socket);
        })
      : base;
    const initial = s.protocol === "h2" && s.streams ? Math.min(s.streams, maxStreams) : 1;
    const c = new undici.Client(origin, { ...options, connect, pipelining: initial });
    made.client = c;
    c.on("connect", () => {
      const session = http2SessionOf(c);
      if (alpn === "http/1.1" || (alpn === undefined && !session)) return;
      s.protocol = "h2";
      if (!session) {
        s.streams = FALLBACK_MAX_STREAMS;
        c.pipelining = Math.min(FALLBACK_MAX_STREAMS, maxStreams);
        learned(s);
        return;
      }
      session.on("remoteSettings", (settings) => {
        const n = streamsFrom(settings?.maxConcurrentStreams);
        s.streams = n;
        c.pipelining = Math.min(n, maxStreams);
        learned(s);
      });
    });
    return c;
  };

  return {
    factory: (origin, options) => new undici.Pool(origin, { ...options, factory: makeClient }),
    async gate(origin, signal, request) {
      const s = stateOf(origin);
      while (s.protocol === undefined && s.probe) await waitOrAbort(s.probe.done, signal);
      if (s.protocol !== undefined || s.probe) return await request();
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      s.probe = { done, release };
      try {
        return await request();
      } finally {
        if (s.probe?.done === done) learned(s);
      }
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

/** Resolves with `p`, or rejects with `signal.reason` once it aborts. */
function waitOrAbort(p: Promise<void>, signal: AbortSignal | null | undefined): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}
