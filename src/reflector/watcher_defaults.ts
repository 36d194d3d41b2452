import { BACKOFF_DEFAULTS, type BackoffOptions } from "../async/backoff.ts";

/**
 * Every default of the watcher and reflector options, in one frozen object:
 * the option resolver reads it, the options' JSDoc `Default:` tags and the
 * options table in docs/reflector.md are checked against it by a test.
 */
export const WATCHER_DEFAULTS: Readonly<{
  /** Items per list page for lists at `"0"` or `""`. */
  pageSize: number;
  /** Watch `timeoutSeconds` is drawn uniformly in [min, 2·min], in ms. */
  minWatchTimeoutMs: number;
  /** Added to the watch timeout to form the default idle deadline, in ms. */
  idleGraceMs: number;
  /** A watch ending in less than this (ms) with no event is a short watch. */
  shortWatchMs: number;
  /** Deadline of one list request, and of a streaming list until its end bookmark, in ms. */
  listTimeoutMs: number;
  /** The longest `Retry-After` honoured, in ms; longer ones are capped to this. */
  maxRetryAfterMs: number;
  /** Streaming lists failing in a row before one plain LIST is used instead. */
  streamingListAttempts: number;
  /** Streaming lists (`sendInitialEvents`) instead of LIST, as client-go does since 1.35. */
  useStreamingList: boolean;
  /** Backoff of lists and of requests the server answered with an error (client-go's values). */
  backoff: Readonly<Required<Omit<BackoffOptions, "clock" | "random">>>;
  /** Backoff of watches that got no answer (server down, connection lost): cheap, so frequent. */
  reconnectBackoff: Readonly<Required<Omit<BackoffOptions, "clock" | "random">>>;
  /** Reflector: `store.resync()` period in ms; 0 disables. */
  resyncPeriodMs: number;
}> = Object.freeze({
  pageSize: 500,
  minWatchTimeoutMs: 300_000,
  idleGraceMs: 30_000,
  shortWatchMs: 1_000,
  listTimeoutMs: 120_000,
  maxRetryAfterMs: 60_000,
  streamingListAttempts: 3,
  useStreamingList: true,
  backoff: BACKOFF_DEFAULTS, // client-go's, as a bare Backoff's
  reconnectBackoff: Object.freeze({
    initialMs: 800,
    factor: 2,
    capMs: 2_000,
    jitter: 1.0,
    resetAfterMs: 120_000,
  }),
  resyncPeriodMs: 0,
});
