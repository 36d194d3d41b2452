import { type Clock, systemClock } from "./clock.ts";

/**
 * Waits `ms` milliseconds; rejects with `signal.reason` as soon as the signal
 * aborts. Leaves no timer and no listener behind either way.
 */
export function delay(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal!.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A child controller that aborts with its parent. Call `dispose()` when done
 * to remove the listener from the parent.
 */
export function childAbortController(parent?: AbortSignal): {
  controller: AbortController;
  dispose: () => void;
} {
  const controller = new AbortController();
  if (!parent) return { controller, dispose: () => {} };
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener("abort", onAbort) };
}

/** A random number forced into [0, 1]: a broken `random` (NaN, negative) never makes a zero wait. */
export function unit(r: number): number {
  return r >= 0 ? Math.min(r, 1) : 0;
}
