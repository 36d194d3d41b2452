/**
 * Typed errors of the transport and the watcher, other than server answers
 * (those are {@linkcode KubeStatusError}). None of their messages holds a
 * credential or object content.
 *
 * @module
 */

/**
 * The request never got an HTTP answer: connection refused, reset, DNS
 * failure, TLS failure. The original error is kept as `cause`.
 *
 * @example
 * ```ts
 * import { KubeNetworkError } from "./errors.ts";
 * const err = new KubeNetworkError("GET /api/v1/pods", new TypeError("fetch failed"));
 * console.log(err.message); // GET /api/v1/pods: network error: fetch failed
 * ```
 */
export class KubeNetworkError extends Error {
  /** The request that failed, without query or credentials. */
  readonly request: string;
  constructor(request: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`${request}: network error: ${why}`, { cause });
    this.name = "KubeNetworkError";
    this.request = request;
  }
}

/**
 * What was wrong with a watch stream's bytes (the `problem` of a
 * {@linkcode WatchDecodeError}).
 *
 * @example
 * ```ts
 * import { WatchDecodeError, type WatchDecodeProblem } from "./errors.ts";
 * const problem: WatchDecodeProblem = "truncated";
 * console.log(new WatchDecodeError(problem, 7, 40).problem); // truncated
 * ```
 */
export type WatchDecodeProblem = "syntax" | "shape" | "truncated" | "line-too-long";

/**
 * A watch stream carried something that is not a watch event: a line that
 * is not JSON (an HTML page, garbage), JSON without `type`/`object`, or
 * a last line cut short. The content itself is not quoted (it could be a
 * Secret); `line` and `length` locate it.
 *
 * @example
 * ```ts
 * import { WatchDecodeError } from "./errors.ts";
 * const err = new WatchDecodeError("syntax", 3, 120);
 * console.log(err.message); // malformed watch stream: line 3 (120 bytes) is not valid JSON
 * ```
 */
export class WatchDecodeError extends Error {
  readonly problem: WatchDecodeProblem;
  /** 1-based line number within the response. */
  readonly line: number;
  /** Length of the offending line in UTF-16 code units. */
  readonly length: number;
  constructor(problem: WatchDecodeProblem, line: number, length: number) {
    const what = {
      syntax: "is not valid JSON",
      shape: "is not a watch event (needs a known type and an object)",
      truncated: "ends without a newline: the stream was cut mid-event",
      "line-too-long": "exceeds the maximum event size",
    }[problem];
    super(`malformed watch stream: line ${line} (${length} bytes) ${what}`);
    this.name = "WatchDecodeError";
    this.problem = problem;
    this.line = line;
    this.length = length;
  }
}

/**
 * An object of another kind than the reflector expects (for example a
 * `Secret` in a ConfigMap stream). It is not stored.
 *
 * @example
 * ```ts
 * import { UnexpectedKindError } from "./errors.ts";
 * const err = new UnexpectedKindError("ConfigMap", "Secret", "default/a");
 * console.log(err.message); // expected kind ConfigMap, got Secret (default/a)
 * ```
 */
export class UnexpectedKindError extends Error {
  readonly expected: string;
  readonly actual: string;
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
 *
 * @example
 * ```ts
 * import { ShortWatchError } from "./errors.ts";
 * console.log(new ShortWatchError(12).message);
 * ```
 */
export class ShortWatchError extends Error {
  /** How long the watch lasted. */
  readonly durationMs: number;
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
 *
 * @example
 * ```ts
 * import { WatchIdleTimeoutError } from "./errors.ts";
 * console.log(new WatchIdleTimeoutError(330000).message);
 * ```
 */
export class WatchIdleTimeoutError extends Error {
  readonly idleMs: number;
  constructor(idleMs: number) {
    super(`watch idle for ${idleMs} ms: connection presumed dead`);
    this.name = "WatchIdleTimeoutError";
    this.idleMs = idleMs;
  }
}

/**
 * A list request took longer than its deadline (`listTimeoutMs`).
 *
 * @example
 * ```ts
 * import { ListTimeoutError } from "./errors.ts";
 * console.log(new ListTimeoutError(60000).message);
 * ```
 */
export class ListTimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`list did not complete within ${timeoutMs} ms`);
    this.name = "ListTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}
