import type { KubeObjectLike } from "../api/types.ts";
import type { Backoff, BackoffOptions } from "../async/backoff.ts";
import type { Clock } from "../async/clock.ts";

/**
 * Where an error reported to `onError` happened.
 */
export type ErrorPhase = "list" | "watch" | "event" | "store" | "handler" | "checkpoint";

/**
 * Who reported an error to an {@linkcode ErrorHandler}.
 */
export interface ErrorContext {
  /** The reflector's or informer's name (its `name` option, or the factory's default name). */
  name: string;
}

/**
 * Receives every error that recovery handles (client-go's watch error
 * handler). It must not throw; if it does, the throw is ignored. Informers
 * (and so every informer of a factory) pass a third argument naming
 * themselves; two-argument handlers work as they are.
 */
export type ErrorHandler = (error: unknown, phase: ErrorPhase, context?: ErrorContext) => void;

/**
 * Observations for metrics; every callback optional, each must be cheap
 * and must not throw (a throw is ignored). See the `metrics` entry point.
 */
export interface WatcherObserver {
  /** A complete list (all pages) finished. */
  listDone?(info: { durationMs: number; items: number; resourceVersion: string }): void;
  /** A list failed. */
  listFailed?(info: { durationMs: number; error: unknown }): void;
  /**
   * A relist is about to happen, and why: the first list, a version gone
   * (410), a failed list retried, streaming lists given up, or a watch whose
   * stream could not be trusted (a malformed event, an ERROR event that is
   * not a 410, an event the store could not apply, an unexpected exception).
   */
  relist?(reason: RelistReason): void;
  /**
   * What the watcher is doing now: `"listing"` (a list or streaming list
   * in progress), `"connecting"` (a watch requested, not yet proven),
   * `"watching"` (a watch that has proven itself: an event that made
   * progress, or open for `shortWatchMs` after the server accepted it; the
   * consumer is current up to its events), `"waiting"` (backing off for
   * `waitMs` before the next attempt), `"stopped"` (a reflector's `run()`
   * ended). Called on every change.
   */
  state?(info: { state: WatcherState; waitMs?: number }): void;
  /** A watch request is starting. */
  watchStart?(): void;
  /** A watch ended (`error` undefined for a clean close). */
  watchEnd?(info: { durationMs: number; events: number; error?: unknown; short: boolean }): void;
  /** An event or bookmark arrived (also for the initial events of a streaming list). */
  event?(type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK", resourceVersion: string): void;
}

/**
 * Why a list happens (see {@linkcode WatcherObserver.relist}).
 */
export type RelistReason =
  | "initial"
  | "expired"
  | "list-failed"
  | "streaming-fallback"
  | "watch-failed";

/**
 * What a watcher is doing (see {@linkcode WatcherObserver.state}).
 */
export type WatcherState = "listing" | "connecting" | "watching" | "waiting" | "stopped";

/**
 * Options of {@linkcode watcher} (and, through `ReflectorOptions`, of the reflector).
 */
export interface WatcherOptions {
  /**
   * Ends the watcher: once it aborts, the generator returns, so a `for await`
   * loop over it ends quietly (nothing is thrown). Default: none (runs until
   * `return()`).
   */
  signal?: AbortSignal;
  /**
   * A resourceVersion the consumer already reflects (for example from an
   * earlier run): the first list asks for nothing older than it, instead of
   * `"0"` (any version, possibly from a lagging cache), so that a store never
   * goes back in time. Default: `""` (nothing known yet).
   */
  initialResourceVersion?: string;
  /**
   * A resourceVersion at which the consumer already holds a complete state
   * (loaded from a checkpoint): the watcher starts with a watch from it, with
   * no list, and yields events from there. If the server no longer has that
   * version (410), it relists at once (relist reason `expired`) and goes on
   * as usual. Default: `""` (start with a list).
   */
  resumeResourceVersion?: string;
  /**
   * Only objects of this `kind` are accepted; others are reported and
   * skipped. With `metadataOnly`, write the resource's kind (`"Pod"`): its
   * `PartialObjectMetadata` objects pass, as they never name their kind.
   * Default: any kind.
   */
  expectedKind?: string;
  /**
   * Items per list page for lists at `"0"` or `""`; 0 lists in one request.
   * A relist from a specific version is always unpaginated (client-go does
   * the same): with `limit`, the API server would read exactly that version
   * from etcd, and right after a restart that version is one its watch cache
   * no longer has, so every watch would 410 again. Default: `500`.
   */
  pageSize?: number;
  /** Watch `timeoutSeconds` is drawn uniformly in [min, 2·min]. Default: `300_000` ms (5 minutes). */
  minWatchTimeoutMs?: number;
  /**
   * The idle deadline of a watch: no event for this long and the connection
   * is presumed half-open; its body is cancelled and the watch restarts from
   * the last resourceVersion. Default: `undefined`, meaning adaptive per
   * server: the watch's own `timeoutSeconds` plus `idleGraceMs` (a server
   * always ends a healthy watch by its timeout, so this never cuts one, but
   * finds a dead peer only after up to 2·min + grace, 10.5 minutes) until the
   * server has been seen sending periodic bookmarks (two on one watch;
   * Kubernetes 1.27+ sends one about every minute); from then on 1.5 times
   * the observed interval, at least 90 s. If that short deadline fires, the
   * safe one applies again until periodic bookmarks are seen anew.
   */
  idleTimeoutMs?: number;
  /** Added to the watch timeout to form the default idle deadline. Default: `30_000` ms. */
  idleGraceMs?: number;
  /** A watch ending in less than this, with no event, is a short-watch error. Default: `1_000` ms. */
  shortWatchMs?: number;
  /**
   * Deadline of one list request (one page, or the whole of an unpaginated
   * list), and of a streaming list until its end bookmark. Default:
   * `120_000` ms (the API server cuts requests at 60 s).
   */
  listTimeoutMs?: number;
  /**
   * Backoff of lists and of requests the server answered with an error
   * (429, 5xx, a malformed answer), or a shared `Backoff`. Default:
   * client-go's values: `800` ms, ×`2`, capped at `30_000` ms, jitter `1.0`,
   * reset after `120_000` ms without a failure.
   */
  backoff?: BackoffOptions | Backoff;
  /**
   * Backoff of watches that got no answer at all (connection refused or
   * reset, DNS or TLS failure, idle deadline), or a shared `Backoff`. Such a
   * request costs a server that is down nothing, so it is retried often, and
   * the store catches up within seconds of the server coming back. Default:
   * `800` ms, ×`2`, capped at `2_000` ms, jitter `1.0` (one attempt every
   * 2–4 s at most), reset after `120_000` ms.
   */
  reconnectBackoff?: BackoffOptions | Backoff;
  /**
   * The longest `Retry-After` (header or `details.retryAfterSeconds`)
   * honoured; a longer one waits this long. Values that are not finite
   * non-negative numbers are ignored. Default: `60_000` ms.
   */
  maxRetryAfterMs?: number;
  /**
   * Use a streaming list (`sendInitialEvents=true`, served from the watch
   * cache: no large LIST response to hold) instead of LIST, as client-go does
   * since 1.35. A server that refuses it (see `StreamingListUnsupportedError`)
   * costs one refused request: then LIST and WATCH, remembered for that
   * server in the process. Set `false` to always LIST. Default: `true`.
   */
  useStreamingList?: boolean;
  /**
   * Streaming lists that may fail (or end before their end bookmark) in a
   * row before one plain paginated LIST is used instead; the next relist
   * tries streaming again. Default: `3`.
   */
  streamingListAttempts?: number;
  /**
   * Given an object just listed, returns the copy the consumer already
   * holds of it when that copy is unchanged, to hand on in its place, or
   * `undefined`. It is called for each item as it is decoded (and for each
   * initial event of a streaming list), so on a relist the listed copies of
   * unchanged objects become garbage one by one instead of being held until
   * the list ends, beside the consumer's own: a relist of mostly unchanged
   * objects then needs little more memory than the consumer's copy. A
   * `Reflector` without this option passes its store's `unchanged` method
   * when the store has one (every store of this library has: it compares
   * key, `uid`, `resourceVersion` and content; an informer with a transform
   * reuses nothing; a store's throw reuses nothing); `() => undefined`
   * turns reuse off, and an `Informer` takes no such option. It is asked
   * only about items the watcher would hand on (objects with usable
   * metadata, of `expectedKind`), and its answer is taken only if it is
   * itself such an item: any other answer (`null`, `undefined`, a
   * primitive, an array, an object of another kind) keeps the listed item.
   * The answer is handed on as it is, not copied. A throw of this function
   * fails the list (reported, then retried after the backoff).
   * Default: none (every listed object is handed on).
   */
  reuseListed?: (listed: KubeObjectLike) => KubeObjectLike | null | undefined;
  /** Receives handled errors. Default: `console.warn` of the error's message. */
  onError?: ErrorHandler;
  /** Receives observations for metrics. Default: none. */
  observer?: WatcherObserver;
  /** Time source for deadlines and backoff. Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for watch timeouts and jitter. Default: `Math.random`. */
  random?: () => number;
}
