/**
 * The metrics interface of work queues.
 *
 * @module
 */

/**
 * The metrics of one work queue (client-go's workqueue metrics), handed out
 * by `MetricsProvider.workqueue`. Every method must be cheap and must not
 * throw. The queue calls `dispose()` when it shuts down: the backend then
 * forgets this queue's series.
 */
export interface WorkQueueMetrics {
  /** Keys waiting to be handled (queued, or re-added while in progress) is now `depth`. */
  depth?(depth: number): void;
  /** A key was added that was not already waiting (duplicates are not counted). */
  add?(): void;
  /** A key was scheduled to be added later (`addAfter`, `addRateLimited`). */
  retry?(): void;
  /** A worker took a key that had waited `durationMs` since it was added. */
  queueDuration?(info: { durationMs: number }): void;
  /** A worker finished a key it had held for `durationMs`. */
  workDuration?(info: { durationMs: number }): void;
  /** Forget this queue: remove its series. Idempotent. */
  dispose(): void;
}
