/**
 * The work queue's rate limiters: client-go's
 * `ItemExponentialFailureRateLimiter`, `BucketRateLimiter` (a token bucket,
 * as `golang.org/x/time/rate`'s `Reserve().Delay()`) and their maximum.
 *
 * @module
 */
import { Backoff, type BackoffOptions } from "../async/backoff.ts";

/** Decides how long a key waits before it is queued again. */
export interface RateLimiter<K> {
  /** The delay (ms) before `key` is queued again; records one more requeue. */
  when(key: K, now: number): number;
  /** Forgets `key`'s failures. */
  forget(key: K): void;
  /** How many times `key` was requeued since it was last forgotten. */
  numRequeues(key: K): number;
}

/**
 * Per-key exponential backoff: `baseMs · 2^failures`, capped at `maxMs`, no
 * jitter, no reset but `forget` (one {@linkcode Backoff} per failing key).
 */
export class ExponentialFailureRateLimiter<K> implements RateLimiter<K> {
  readonly #options: BackoffOptions;
  readonly #failures = new Map<K, { backoff: Backoff; requeues: number }>();

  constructor(baseMs: number, maxMs: number) {
    this.#options = {
      initialMs: baseMs,
      factor: 2,
      capMs: maxMs,
      jitter: 0,
      resetAfterMs: Infinity,
    };
  }

  when(key: K): number {
    let failures = this.#failures.get(key);
    if (!failures) {
      failures = { backoff: new Backoff(this.#options), requeues: 0 };
      this.#failures.set(key, failures);
    }
    failures.requeues++;
    return failures.backoff.next();
  }

  forget(key: K): void {
    this.#failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.#failures.get(key)?.requeues ?? 0;
  }
}

/**
 * One token bucket for every key: `burst` requeues at once, then `qps` per
 * second. Each call takes a token, going into debt when none is left; the
 * delay is the time the debt takes to refill.
 */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  readonly #qps: number;
  readonly #burst: number;
  #tokens: number;
  #last: number | undefined;

  constructor(qps: number, burst: number) {
    this.#qps = qps;
    this.#burst = burst;
    this.#tokens = burst;
  }

  when(_key: K, now: number): number {
    if (this.#last !== undefined) {
      const refill = (Math.max(0, now - this.#last) * this.#qps) / 1000;
      this.#tokens = Math.min(this.#burst, this.#tokens + refill);
    }
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#qps) * 1000;
  }

  forget(): void {}

  numRequeues(): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's `MaxOfRateLimiter`). */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  readonly #limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.#limiters = limiters;
  }

  when(key: K, now: number): number {
    let ms = 0;
    for (const l of this.#limiters) ms = Math.max(ms, l.when(key, now));
    return ms;
  }

  forget(key: K): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: K): number {
    let n = 0;
    for (const l of this.#limiters) n = Math.max(n, l.numRequeues(key));
    return n;
  }
}
