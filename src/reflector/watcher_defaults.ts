/**
 * Every default of the watcher and reflector options, in one frozen object:
 * the option resolver reads it, the options' JSDoc `Default:` tags and the
 * README's options table are checked against it by a test.
 *
 * @example
 * ```ts
 * import { WATCHER_DEFAULTS } from "./watcher_defaults.ts";
 * console.log(WATCHER_DEFAULTS.backoff.capMs); // 30000
 * console.log(WATCHER_DEFAULTS.reconnectBackoff.capMs); // 2000
 * ```
 */
export const WATCHER_DEFAULTS = Object.freeze({
  /** Items per list page for lists at `"0"` or `""`. */
  pageSize: 500,
  /** Watch `timeoutSeconds` is drawn uniformly in [min, 2·min]. */
  minWatchTimeoutMs: 300_000,
  /** Added to the watch timeout to form the default idle deadline. */
  idleGraceMs: 30_000,
  /** A watch ending in less than this with no event is a short watch. */
  shortWatchMs: 1_000,
  /** Deadline of one list request, and of a streaming list until its end bookmark. */
  listTimeoutMs: 120_000,
  /** The longest `Retry-After` honoured; longer ones are capped to this. */
  maxRetryAfterMs: 60_000,
  /** Streaming lists failing in a row before one plain LIST is used instead. */
  streamingListAttempts: 3,
  /** Streaming lists (`sendInitialEvents`) instead of LIST, as client-go does since 1.35. */
  useStreamingList: true,
  /** Backoff of lists and of requests the server answered with an error (client-go's values). */
  backoff: Object.freeze({
    initialMs: 800,
    factor: 2,
    capMs: 30_000,
    jitter: 1.0,
    resetAfterMs: 120_000,
  }),
  /** Backoff of watches that got no answer (server down, connection lost): cheap, so frequent. */
  reconnectBackoff: Object.freeze({
    initialMs: 800,
    factor: 2,
    capMs: 2_000,
    jitter: 1.0,
    resetAfterMs: 120_000,
  }),
  /** Reflector: `store.resync()` period; 0 disables. */
  resyncPeriodMs: 0,
});
