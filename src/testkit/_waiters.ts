/**
 * Promises that resolve when a condition on the server's state becomes
 * true. The server calls `notify()` after every change (request logged,
 * watch opened or closed, object written); each pending wait re-checks.
 * No polling, and no timer outlives its wait.
 *
 * @module
 */
import type { WaitOptions } from "./types.ts";

interface Pending {
  check(): void;
  fail(reason: unknown): void;
}

/** The pending waits of one server. */
export class Waiters {
  #pending = new Set<Pending>();

  /**
   * Resolves once `condition()` returns true; rejects on timeout, abort or
   * `rejectAll`. The rejection counts as handled, so a wait nobody awaits
   * any more (say, when a test failed before awaiting it and then closed
   * the server) does not surface as an unhandled rejection; whoever awaits
   * it still sees it.
   */
  wait(condition: () => boolean, what: string, options: WaitOptions = {}): Promise<void> {
    const promise = this.#wait(condition, what, options);
    promise.catch(() => {});
    return promise;
  }

  #wait(condition: () => boolean, what: string, options: WaitOptions): Promise<void> {
    const { signal, timeoutMs = 10_000 } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (condition()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (error?: unknown, failed = false) => {
        this.#pending.delete(pending);
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (failed) reject(error);
        else resolve();
      };
      const pending: Pending = {
        check: () => {
          if (condition()) settle();
        },
        fail: (reason) => settle(reason, true),
      };
      const onAbort = () => settle(signal!.reason, true);
      if (Number.isFinite(timeoutMs)) {
        const message = `FakeApiServer: timed out after ${timeoutMs} ms waiting for ${what}`;
        timer = setTimeout(() => settle(new Error(message), true), timeoutMs);
      }
      signal?.addEventListener("abort", onAbort);
      this.#pending.add(pending);
    });
  }

  /** Re-checks every pending wait. */
  notify(): void {
    for (const pending of [...this.#pending]) pending.check();
  }

  /** Rejects every pending wait with `reason`. */
  rejectAll(reason: unknown): void {
    for (const pending of [...this.#pending]) pending.fail(reason);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no timer behind. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
