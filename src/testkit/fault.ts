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
import type { RequestVerb } from "./types.ts";

/**
 * Answer with an HTTP error at request time. The body defaults to the
 * JSON `Status` the real server sends for that code (410 `Expired`, 429
 * `TooManyRequests` with `details.retryAfterSeconds`, 500 `InternalError`,
 * 503 `ServiceUnavailable`, 504 `Timeout`...).
 */
export interface StatusFault {
  /** Selects this fault. */
  kind: "status";
  /** The HTTP status code. */
  code: number;
  /** Sets the `Retry-After` header (and `details.retryAfterSeconds`). Default: 1 for 429, else none. */
  retryAfterSeconds?: number;
  /**
   * The `Retry-After` header's text as it is, valid or not (`"soon"`,
   * `"-5"`, an HTTP-date), in place of the one `retryAfterSeconds` would
   * set; the body is not changed. Default: none.
   */
  retryAfter?: string;
  /**
   * `"status"`: the JSON Status; `"html"`: a proxy's error page
   * (`text/html`); `"text"`: a plain-text line, as the API server's
   * priority-and-fairness filter sends with 429; `"empty"`: nothing.
   * Default: `"status"`.
   */
  body?: "status" | "html" | "empty" | "text";
  /** Replaces the default message. */
  message?: string;
}

/**
 * Watch: send `afterEvents` events, then end the response cleanly (with
 * `afterEvents: 0`, a short watch). List: half the body, then a clean end.
 */
export interface CloseFault {
  /** Selects this fault. */
  kind: "close";
  /** Events sent first. Default: `0`. */
  afterEvents?: number;
}

/**
 * Send the headers (and `afterEvents` events; for a list, half the body),
 * then nothing, never ending, until the client gives up or the server
 * closes: a half-open connection as the client sees it.
 */
export interface StallFault {
  /** Selects this fault. */
  kind: "stall";
  /** Events sent first. Default: `0`. */
  afterEvents?: number;
}

/**
 * Watch: after `afterEvents` events, send an ERROR event carrying the
 * Status for `code`, then end. Other requests: answered like a
 * {@linkcode StatusFault} with that code.
 */
export interface ErrorEventFault {
  /** Selects this fault. */
  kind: "error-event";
  /** The Status code (410: `Expired`, "The resourceVersion for the provided watch is too old."). */
  code: number;
  /** Events sent first. Default: `0`. */
  afterEvents?: number;
  /** Replaces the Status message. */
  message?: string;
}

/**
 * Watch: after `afterEvents` events, write these bytes as they are
 * (garbage, a truncated line, an HTML page, an event of the wrong kind),
 * then go on with the stream or end it. List: answer 200 with these bytes
 * as the body.
 */
export interface RawFault {
  /** Selects this fault. */
  kind: "raw";
  /** The bytes (a string is written as UTF-8). */
  data: string | Uint8Array;
  /** Events sent first. Default: `0`. */
  afterEvents?: number;
  /** Go on with the stream, or end it. Default: `"continue"`. */
  then?: "continue" | "close";
}

/**
 * Write this response's body (watch or list) in chunks of `chunkSize`
 * bytes, splitting anywhere (inside multi-byte UTF-8 characters too), each
 * chunk flushed on its own, with a turn of the event loop before the next.
 */
export interface ChunkedFault {
  /** Selects this fault. */
  kind: "chunked";
  /** Bytes per chunk, or `"random"`: sizes from 1 to `maxChunkSize`. */
  chunkSize: number | "random";
  /** Seed of the random sizes (the same seed, the same sizes). Default: `1`. */
  seed?: number;
  /** Largest random size. Default: `64`. */
  maxChunkSize?: number;
}

/**
 * Reset the connection (TCP RST): at request time when `afterEvents` is
 * absent, else once that many watch events (for a list: half the body)
 * have reached the socket.
 *
 * A fetch that finds a reused keep-alive connection closed before any
 * answer may send the request again on a new connection without telling
 * its caller (Deno's fetch does). So while a request-time reset rule is
 * armed, the server makes every connection serve one request only: the
 * reset always meets a new connection, and every client sees it.
 */
export interface ResetFault {
  /** Selects this fault. */
  kind: "reset";
  /** Events sent first; absent: reset at request time. */
  afterEvents?: number;
}

/**
 * One fault.
 */
export type Fault =
  | StatusFault
  | CloseFault
  | StallFault
  | ErrorEventFault
  | RawFault
  | ChunkedFault
  | ResetFault;

/**
 * The requests a rule applies to: one verb the server knows, or `"any"`
 * (all).
 */
export type FaultVerb = Exclude<RequestVerb, "unknown"> | "any";

/**
 * A rule: which requests get which fault, how many times. Rules are tried
 * in the order they were injected; the first that matches is used and
 * counts one use.
 */
export interface FaultRule {
  /** Default: `"any"`. */
  verb?: FaultVerb;
  /** Plural resource name; default: any resource. */
  resource?: string;
  /** Only requests in this namespace; default: any. */
  namespace?: string;
  /**
   * Only requests whose `resourceVersion` query parameter is this (`""`:
   * requests without one); default: any. A watch from one version that
   * always fails, as a stored event that cannot be served would make it.
   */
  resourceVersion?: string;
  /** How many requests get the fault; default 1, `Infinity` allowed. */
  times?: number;
  /** What those requests get. */
  fault: Fault;
}

/**
 * The handle {@linkcode FakeApiServer.inject} returns.
 */
export interface InjectedFault {
  /** The rule as injected. */
  readonly rule: Readonly<FaultRule>;
  /** Requests that got the fault so far. */
  readonly fired: number;
  /** Requests that will still get it. */
  readonly remaining: number;
  /** Removes the rule. */
  cancel(): void;
}
