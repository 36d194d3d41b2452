/**
 * Typed errors of the transport and the watcher, other than server answers
 * (those are {@linkcode KubeStatusError}). None of their messages holds a
 * credential or object content.
 *
 * @module
 */
import { describeNetworkCause } from "./_network_cause.ts";
import { KubeStatusError } from "./kube_status_error.ts";
import { DecodeError } from "./decode_error.ts";

/**
 * The request never got an HTTP answer: connection refused, reset, DNS
 * failure, TLS failure. The message names the innermost cause, whichever
 * runtime wrapped it (undici's `fetch failed` and its `cause`, Deno's
 * `error sending request ...`, Bun's codes), as a Node-style code and a
 * short text: `GET /api/v1/pods: network error: ECONNREFUSED (connection
 * refused)`. A name that did not resolve is named (`ENOTFOUND
 * kube.example (host not found)`), and a certificate issued for other
 * names lists them as kubectl does (`ERR_TLS_CERT_ALTNAME_INVALID
 * (certificate is valid for kube.test, not 10.0.0.1)`). It never holds a
 * URL's query, a credential, a header value or a body (they are
 * stripped), and stays short. The original error is kept as `cause`.
 *
 * @example No server listening
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, KubeNetworkError } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * await server.goDown(); // nothing listens on its port now
 * const client = new KubeClient({ server: server.url });
 * const err = await client.request("/api/v1/pods", { query: { limit: "1" } }).catch((e) => e);
 * assert.ok(err instanceof KubeNetworkError);
 * assert.equal(err.code, "ECONNREFUSED");
 * assert.equal(err.message, "GET /api/v1/pods: network error: ECONNREFUSED (connection refused)");
 * await server.close();
 * ```
 */
export class KubeNetworkError extends Error {
  /** The request that failed, without query or credentials. */
  readonly request: string;
  /**
   * The innermost cause's code, Node-style (`"ECONNREFUSED"`, `"ENOTFOUND"`,
   * `"CERT_HAS_EXPIRED"`...; derived from the message on Deno, which gives
   * none), or `undefined` when unknown.
   */
  readonly code: string | undefined;
  /**
   * Creates the error; `code` is read from `cause` (or its innermost cause).
   *
   * @param request The request that failed, as `"GET /api/v1/pods"` (no query, no credentials).
   * @param cause What `fetch` threw or the body's read rejected with.
   */
  constructor(request: string, cause: unknown) {
    const { code, text } = describeNetworkCause(cause);
    super(`${request}: network error: ${text}`, { cause });
    this.name = "KubeNetworkError";
    this.request = request;
    this.code = code;
  }
}

/**
 * What was wrong with a watch stream's bytes (the `problem` of a
 * {@linkcode WatchDecodeError}).
 */
export type WatchDecodeProblem = "syntax" | "shape" | "truncated" | "line-too-long" | "encoding";

/**
 * A watch stream carried something that is not a watch event: a line that
 * is not JSON (an HTML page, garbage), JSON without `type`/`object` or
 * whose object's `metadata.resourceVersion` is not a string (`shape`), a
 * last line cut short, a line longer than the maximum, or bytes that are
 * not valid UTF-8 (`encoding`: `length` is then how much of the line had
 * been decoded). The content itself is not quoted (it could be a Secret);
 * `line` and `length` locate it. The watch stream's {@linkcode DecodeError},
 * as `ListDecodeError` is the list body's.
 */
export class WatchDecodeError extends DecodeError<WatchDecodeProblem> {
  /** 1-based line number within the response. */
  readonly line: number;
  /** Length of the offending line in UTF-16 code units. */
  readonly length: number;
  /**
   * Creates the error; the message describes `problem` and locates the line.
   *
   * @param problem What was wrong with the line.
   * @param line The 1-based line number within the response.
   * @param length The line's length in UTF-16 code units (for `encoding`: how much had been decoded).
   */
  constructor(problem: WatchDecodeProblem, line: number, length: number) {
    const what = {
      syntax: "is not valid JSON",
      shape: "is not a watch event (needs a known type and an object)",
      truncated: "ends without a newline: the stream was cut mid-event",
      "line-too-long": "exceeds the maximum event size",
      encoding: "is not valid UTF-8",
    }[problem];
    super(problem, `malformed watch stream: line ${line} (${length} bytes) ${what}`);
    this.name = "WatchDecodeError";
    this.line = line;
    this.length = length;
  }
}

/**
 * An object of another kind than the reflector expects (for example a
 * `Secret` in a ConfigMap stream). It is not stored.
 */
export class UnexpectedKindError extends Error {
  /** The kind the reflector expects (its `expectedKind` option). */
  readonly expected: string;
  /** The object's `kind`, or `""` when it has none. */
  readonly actual: string;
  /**
   * Creates the error; the message names both kinds and the object's key.
   *
   * @param expected The kind expected.
   * @param actual The object's `kind` (`""`: none).
   * @param key The object's store key, when known (`""`: unknown).
   */
  constructor(expected: string, actual: string, key: string) {
    super(`expected kind ${expected}, got ${actual || "(none)"}${key ? ` (${key})` : ""}`);
    this.name = "UnexpectedKindError";
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * A watch ended within the short-watch window having delivered no event:
 * the server is likely misbehaving; the watcher backs off before the next try.
 */
export class ShortWatchError extends Error {
  /** How long the watch lasted. */
  readonly durationMs: number;
  /**
   * Creates the error; the message gives the duration.
   *
   * @param durationMs How long the watch lasted, in ms.
   */
  constructor(durationMs: number) {
    super(`very short watch: ended after ${Math.round(durationMs)} ms with no events`);
    this.name = "ShortWatchError";
    this.durationMs = durationMs;
  }
}

/**
 * No byte arrived on a watch for longer than the idle deadline: the
 * connection is taken for half-open, its body is cancelled, and the watch
 * restarts from the last resourceVersion.
 */
export class WatchIdleTimeoutError extends Error {
  /** The deadline that passed, in ms. */
  readonly idleMs: number;
  /**
   * Creates the error; the message gives the deadline and, when given, how it was chosen.
   *
   * @param idleMs The deadline that passed, in ms.
   * @param why How the deadline was chosen, when it explains the decision
   *   (a deadline learnt from a server's periodic bookmarks). Default: none.
   */
  constructor(idleMs: number, why?: string) {
    super(
      `watch idle for ${Math.round(idleMs)} ms: connection presumed dead${why ? ` (${why})` : ""}`,
    );
    this.name = "WatchIdleTimeoutError";
    this.idleMs = idleMs;
  }
}

/**
 * A list request took longer than its deadline (`listTimeoutMs`).
 */
export class ListTimeoutError extends Error {
  /** The deadline that passed, in ms. */
  readonly timeoutMs: number;
  /**
   * Creates the error; the message gives the deadline.
   *
   * @param timeoutMs The deadline that passed, in ms.
   */
  constructor(timeoutMs: number) {
    super(`list did not complete within ${timeoutMs} ms`);
    this.name = "ListTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * The API server answered with a redirect (3xx), which the client refuses
 * to follow (why: see `KubeClient`). It is a {@linkcode KubeStatusError}
 * whose `code` is the 3xx status (or `0` when the runtime hides it: an
 * opaque redirect, or a custom `fetch` that followed the redirect anyway),
 * not retriable. `location` is where the redirect pointed, reduced to
 * origin and path (no credentials, query or fragment); the message says
 * the same.
 */
export class KubeRedirectError extends KubeStatusError {
  /** Where the redirect pointed (origin and path only), when known. */
  readonly location: string | undefined;
  /**
   * Creates the error; `location` is reduced to origin and path before it is kept or shown.
   *
   * @param request The request that was redirected, as `"GET /api/v1/pods"`.
   * @param code The 3xx status, or `0` when the runtime hides it.
   * @param location The `Location` header or the URL the response came from, when known.
   */
  constructor(request: string, code: number, location?: string | URL | null) {
    const where = redirectTarget(location);
    super({
      code,
      request,
      bodyDescription: `redirect refused${where ? ` (to ${where})` : ""}`,
    });
    this.name = "KubeRedirectError";
    this.location = where;
  }
}

function redirectTarget(location: string | URL | null | undefined): string | undefined {
  if (location === null || location === undefined || location === "") return undefined;
  try {
    const url = new URL(location);
    if (url.protocol !== "http:" && url.protocol !== "https:") return `${url.protocol} URL`;
    return `${url.origin}${url.pathname}`;
  } catch {
    return "an invalid location";
  }
}

/**
 * The server refused a streaming list (`sendInitialEvents`): Kubernetes
 * before 1.27 answers 422, a server with the `WatchList` feature gate off or
 * an aggregated API without it answers 400/403/404/405/501. What the
 * watcher does then: see `WatcherOptions.useStreamingList`. Reported once
 * per server and process (watchers started together are all refused; one
 * reports it); `version` names the server's version when it could be read.
 */
export class StreamingListUnsupportedError extends Error {
  /** The server's `gitVersion`, when known. */
  readonly version: string | undefined;

  /**
   * Creates the error; the message names the server's version and the refusal.
   *
   * @param version The server's `gitVersion`, when known.
   * @param cause The refusal.
   */
  constructor(version: string | undefined, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(
      `streaming lists refused by ${
        version ? `kube-apiserver ${version}` : "the server"
      } (${why}): LIST and WATCH from now on for this server`,
      { cause },
    );
    this.name = "StreamingListUnsupportedError";
    this.version = version;
  }
}
