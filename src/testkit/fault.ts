/**
 * The faults a test can make the fake API server produce, one request at a
 * time (see {@linkcode FakeApiServer.inject}).
 *
 * "Events" in `afterEvents` counts every line written to a watch stream
 * (synthetic ADDED events, replayed and live events, bookmarks); `0` means
 * right after the response headers. For a LIST, the faults that cut a body
 * short (`close`, `stall`, `reset` with `afterEvents`) send the headers and
 * the first half of the body.
 *
 * @module
 */

/**
 * Answer with an HTTP error at request time. The body defaults to the
 * JSON `Status` the real server sends for that code (410 `Expired`, 429
 * `TooManyRequests` with `details.retryAfterSeconds`, 500 `InternalError`,
 * 503 `ServiceUnavailable`, 504 `Timeout`...); `"html"` is a proxy's error
 * page (`text/html`), `"text"` a plain-text line like the API server's
 * priority-and-fairness filter sends with 429, `"empty"` nothing.
 * `retryAfterSeconds` sets the `Retry-After` header (429 defaults to 1).
 */
export interface StatusFault {
  kind: "status";
  code: number;
  retryAfterSeconds?: number;
  body?: "status" | "html" | "empty" | "text";
  /** Replaces the default message. */
  message?: string;
}

/** Watch: send `afterEvents` events (default 0: a short watch), then end the response cleanly. */
export interface CloseFault {
  kind: "close";
  afterEvents?: number;
}

/** Send the headers (and `afterEvents` events), then nothing, never ending until the client or `close()` does. */
export interface StallFault {
  kind: "stall";
  afterEvents?: number;
}

/** Watch: after `afterEvents` events (default 0), send an ERROR event carrying the Status for `code`, then end. */
export interface ErrorEventFault {
  kind: "error-event";
  code: number;
  afterEvents?: number;
  /** Replaces the Status message. */
  message?: string;
}

/**
 * Watch: after `afterEvents` events (default 0), write these bytes as they
 * are (garbage, a truncated line, an HTML page, an event of the wrong kind),
 * then go on with the stream (`then: "continue"`, the default) or end it
 * (`"close"`). List: answer 200 with these bytes as the body.
 */
export interface RawFault {
  kind: "raw";
  data: string | Uint8Array;
  afterEvents?: number;
  then?: "continue" | "close";
}

/**
 * Write this response's body (watch or list) in chunks of `chunkSize`
 * bytes, splitting anywhere (inside multi-byte UTF-8 characters too), each
 * chunk flushed on its own before the next. `"random"` draws sizes from 1
 * to `maxChunkSize` (default 64) with a PRNG seeded by `seed` (default 1).
 */
export interface ChunkedFault {
  kind: "chunked";
  chunkSize: number | "random";
  seed?: number;
  maxChunkSize?: number;
}

/**
 * Drop the connection: at request time when `afterEvents` is absent (a
 * TCP reset), else once that many watch events (for a list: half the
 * body) have reached the socket, by closing it without finishing the body
 * (so the client reads those events, then fails on the incomplete body; a
 * reset there could make the client's kernel discard them unread).
 *
 * A request-time reset on a reused keep-alive connection may be retried by
 * the client's fetch without telling its caller (Deno's fetch does this
 * once; Node's does not). Start the server with `keepAlive: false`, or use
 * `afterEvents: 0`, to make every client see the reset.
 */
export interface ResetFault {
  kind: "reset";
  afterEvents?: number;
}

/**
 * One fault.
 *
 * @example
 * ```ts
 * import type { Fault } from "./fault.ts";
 * const tooMany: Fault = { kind: "status", code: 429, retryAfterSeconds: 2 };
 * const gone: Fault = { kind: "error-event", code: 410, afterEvents: 3 };
 * ```
 */
export type Fault =
  | StatusFault
  | CloseFault
  | StallFault
  | ErrorEventFault
  | RawFault
  | ChunkedFault
  | ResetFault;

/** The requests a rule applies to. */
export type FaultVerb = "list" | "watch" | "get" | "create" | "update" | "delete" | "any";

/**
 * A rule: which requests get which fault, how many times. Rules are tried
 * in the order they were injected; the first that matches is used and
 * counts one use.
 *
 * @example
 * ```ts
 * import type { FaultRule } from "./fault.ts";
 * const rule: FaultRule = { verb: "watch", resource: "configmaps", times: 2, fault: { kind: "close" } };
 * ```
 */
export interface FaultRule {
  /** Default: `"any"`. */
  verb?: FaultVerb;
  /** Plural resource name; default: any resource. */
  resource?: string;
  /** Only requests in this namespace; default: any. */
  namespace?: string;
  /** How many requests get the fault; default 1, `Infinity` allowed. */
  times?: number;
  fault: Fault;
}

/**
 * The handle {@linkcode FakeApiServer.inject} returns.
 *
 * @example
 * ```ts
 * import { FakeApiServer } from "../../testkit.ts";
 * const server = await FakeApiServer.start();
 * const injected = server.inject({ verb: "list", fault: { kind: "status", code: 500 } });
 * console.log(injected.fired, injected.remaining); // 0 1
 * injected.cancel();
 * await server.close();
 * ```
 */
export interface InjectedFault {
  readonly rule: Readonly<FaultRule>;
  /** Requests that got the fault so far. */
  readonly fired: number;
  /** Requests that will still get it. */
  readonly remaining: number;
  /** Removes the rule. */
  cancel(): void;
}
