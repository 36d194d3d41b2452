import { WatchIdleTimeoutError } from "../api/errors.ts";
import type { Clock } from "../async/clock.ts";
import type { ServerFeatures } from "../transport/server_features.ts";

/**
 * Wraps an event stream with an idle deadline: while the wrapper waits for
 * the next event, the clock runs; when `idleMs` pass without one,
 * `controller` is aborted with a {@linkcode WatchIdleTimeoutError} (which
 * cancels the request and its body). Time the consumer spends on an event is
 * never idle time. `idleMs` is read again each time the timer fires (see
 * `check`). One timer, re-armed only when it fires, so events cost no
 * timer calls. When `controller` aborts, the wrapper stops waiting at
 * once, even for a stream that ignores its signal. Leaves no timer behind.
 */
export async function* withIdleDeadline<E>(
  events: AsyncIterable<E>,
  idleMs: () => number,
  clock: Clock,
  controller: AbortController,
  /** Look at `idleMs` again at least every `CHECK_MS` (see `check`). */
  adaptive = false,
  /** How the deadline was chosen, for the error's message. */
  why: () => string | undefined = () => undefined,
): AsyncGenerator<E, void, undefined> {
  const signal = controller.signal;
  const cap = adaptive ? CHECK_MS : Infinity;
  const iterator = events[Symbol.asyncIterator]();
  /** Set while waiting on the stream; undefined while the consumer holds an event. */
  let waitingSince: number | undefined;
  let timer: unknown;
  // The deadline may shrink while the watch runs (periodic bookmarks learnt
  // on it): the timer looks again at least every CHECK_MS.
  const check = () => {
    const idle = waitingSince === undefined ? 0 : clock.now() - waitingSince;
    const limit = idleMs();
    if (idle >= limit) controller.abort(new WatchIdleTimeoutError(limit, why()));
    else timer = clock.setTimeout(check, Math.min(limit - idle, cap));
  };
  // The wait for the next step rejects at once on abort. Not Promise.race
  // with one long-lived "aborted" promise: every race would leave a
  // reaction on it holding that step's result, so a watch would keep every
  // event it ever delivered until it ended.
  let rejectWait: ((reason: unknown) => void) | undefined;
  const onAbort = () => rejectWait?.(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  let settled = true; // the last next() has settled
  let last: Promise<unknown> = Promise.resolve();
  let done = false;
  timer = clock.setTimeout(check, Math.min(idleMs(), cap));
  try {
    while (true) {
      waitingSince = clock.now();
      settled = false;
      signal.throwIfAborted();
      const pending = iterator.next();
      last = pending.then(() => (settled = true), () => (settled = true));
      const step = await new Promise<IteratorResult<E>>((resolve, reject) => {
        rejectWait = reject;
        if (signal.aborted) reject(signal.reason);
        pending.then(resolve, reject);
      });
      rejectWait = undefined;
      waitingSince = undefined;
      if (step.done) {
        done = true;
        return;
      }
      yield step.value;
    }
  } finally {
    clock.clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    if (!done) {
      // A stream that honours its signal settles at once; give one that does
      // not a moment, then leave it behind rather than hang.
      if (!settled) {
        let handle: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<void>((resolve) => (handle = setTimeout(resolve, 100)));
        await Promise.race([last, late]);
        clearTimeout(handle);
      }
      if (settled) await Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }
}

/** The idle deadline is looked at again at least this often. */
const CHECK_MS = 15_000;

/** Bookmarks further apart than this are not taken for periodic ones. */
export const MAX_BOOKMARK_GAP_MS = 5 * 60_000;
/** The shortest learnt idle deadline. */
const MIN_LEARNT_IDLE_MS = 90_000;
/** Added to two intervals for a watch that has not yet seen a periodic bookmark. */
const FRESH_SLACK_MS = 30_000;

/**
 * The idle deadline for a server seen sending periodic bookmarks
 * (`undefined` when none has been seen), never more than the safe default:
 *
 * - on a watch that has already had a periodic bookmark or an event
 *   (`established`): 1.5 times the interval, at least 90 s: about 90 s for
 *   Kubernetes 1.27+'s one-minute bookmarks;
 * - on a fresh watch: two intervals + 30 s (150 s). kube-apiserver skips a
 *   periodic bookmark whose version is not past the watch's start, so on a
 *   quiet resource a fresh watch's first bookmark can come a period late.
 */
export function adaptiveIdleMs(
  features: ServerFeatures | undefined,
  safeIdleMs: number,
  established: boolean,
): number | undefined {
  const interval = features?.bookmarkIntervalMs;
  if (interval === undefined) return undefined;
  const learnt = established
    ? Math.max(MIN_LEARNT_IDLE_MS, Math.round(interval * 1.5))
    : Math.max(MIN_LEARNT_IDLE_MS, 2 * interval + FRESH_SLACK_MS);
  return Math.min(safeIdleMs, learnt);
}
