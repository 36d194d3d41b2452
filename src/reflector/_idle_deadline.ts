import { WatchIdleTimeoutError } from "../api/errors.ts";
import type { Clock } from "./clock.ts";
import type { ServerFeatures } from "../transport/server_features.ts";

/**
 * Wraps an event stream with an idle deadline: while the wrapper waits for
 * the next event, a timer runs; when `idleMs` pass without one, `abort` is
 * called with a {@linkcode WatchIdleTimeoutError} (the caller aborts the
 * request, which cancels the body and ends the stream). The timer runs only
 * while waiting on the stream, so time the consumer spends on an event is
 * never idle time. Leaves no timer behind.
 */
export async function* withIdleDeadline<E>(
  events: AsyncIterable<E>,
  idleMs: number,
  clock: Clock,
  abort: (reason: WatchIdleTimeoutError) => void,
): AsyncGenerator<E, void, undefined> {
  const iterator = events[Symbol.asyncIterator]();
  let done = false;
  try {
    while (true) {
      const handle = clock.setTimeout(() => abort(new WatchIdleTimeoutError(idleMs)), idleMs);
      let step: IteratorResult<E>;
      try {
        step = await iterator.next();
      } finally {
        clock.clearTimeout(handle);
      }
      if (step.done) {
        done = true;
        return;
      }
      yield step.value;
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}

/** Bookmarks further apart than this are not taken for periodic ones. */
export const MAX_BOOKMARK_GAP_MS = 5 * 60_000;
/** The shortest learnt idle deadline. */
const MIN_LEARNT_IDLE_MS = 90_000;

/**
 * The idle deadline for a server seen sending periodic bookmarks: 1.5 times
 * their interval, at least 90 s (so about 90 s for Kubernetes 1.27+'s
 * one-minute bookmarks), never more than the safe default; `undefined` when
 * no periodic bookmark has been seen.
 */
export function adaptiveIdleMs(
  features: ServerFeatures | undefined,
  safeIdleMs: number,
): number | undefined {
  const interval = features?.bookmarkIntervalMs;
  if (interval === undefined) return undefined;
  return Math.min(safeIdleMs, Math.max(MIN_LEARNT_IDLE_MS, Math.round(interval * 1.5)));
}
