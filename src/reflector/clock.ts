/**
 * An opaque timer handle from {@linkcode Clock.setTimeout}.
 *
 * @example
 * ```ts
 * import { systemClock, type TimerHandle } from "./clock.ts";
 * const handle: TimerHandle = systemClock.setTimeout(() => console.log("too late"), 60_000);
 * systemClock.clearTimeout(handle);
 * ```
 */
export type TimerHandle = unknown;

/**
 * Time as the reflector sees it. Inject a fake one in tests to drive
 * backoff, resync and deadlines without waiting.
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * const t0 = systemClock.now();
 * const h = systemClock.setTimeout(() => console.log(systemClock.now() - t0), 10);
 * ```
 */
export interface Clock {
  /** Milliseconds on a monotonic-enough scale. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The real clock: `Date.now`, `setTimeout`, `clearTimeout`.
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * console.log(systemClock.now() > 0);
 * ```
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
