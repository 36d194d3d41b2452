/**
 * An opaque timer handle from {@linkcode Clock.setTimeout}.
 */
export type TimerHandle = unknown;

/**
 * Time as the reflector sees it. Inject a fake one in tests to drive
 * backoff, resync and deadlines without waiting.
 */
export interface Clock {
  /** Milliseconds on a monotonic-enough scale. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; a handle that already fired or was cleared is ignored. */
  clearTimeout(handle: TimerHandle): void;
}

/** The longest delay `setTimeout` takes as written: longer ones fire after about 1 ms on every runtime. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The real clock: milliseconds since the epoch, but monotonic
 * (`performance.timeOrigin + performance.now()`), `setTimeout`, `clearTimeout`. A delay longer
 * than `setTimeout` can take (2^31−1 ms, about 24.8 days) is split into
 * several timers, so that a 30-day period waits 30 days; a delay that is not
 * a finite number is a `RangeError` (never a timer that fires at once).
 */
export const systemClock: Clock = {
  // monotonic (a wall-clock step never shortens a backoff or a deadline), on the epoch's scale
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn, ms) => {
    if (typeof ms !== "number" || Number.isNaN(ms) || ms === Infinity) {
      throw new RangeError(`Clock.setTimeout: delay must be a finite number of ms, got ${ms}`);
    }
    const timer: { id?: ReturnType<typeof setTimeout> } = {};
    const arm = (left: number) => {
      timer.id = left > MAX_TIMER_MS
        ? setTimeout(() => arm(left - MAX_TIMER_MS), MAX_TIMER_MS)
        : setTimeout(fn, Math.max(0, left));
    };
    arm(ms);
    return timer;
  },
  clearTimeout: (handle) => {
    const timer = handle as { id?: ReturnType<typeof setTimeout> } | undefined;
    if (timer?.id !== undefined) clearTimeout(timer.id);
  },
};
