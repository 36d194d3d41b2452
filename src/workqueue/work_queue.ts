/**
 * A work queue with client-go's `workqueue` semantics: deduplicated keys,
 * one worker per key, delayed and rate-limited re-adds, metrics.
 *
 * @module
 */
import { type Clock, systemClock, type TimerHandle } from "../async/clock.ts";
import { type MetricsProvider, noopMetrics } from "../metrics/reflector_metrics.ts";
import type { WorkQueueMetrics } from "../metrics/workqueue_metrics.ts";
import {
  BucketRateLimiter,
  ExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from "./_rate_limiter.ts";

/**
 * Options of {@linkcode WorkQueue}.
 */
export interface WorkQueueOptions {
  /** The queue's name: the label of its metrics. Default: `"workqueue"`. */
  name?: string;
  /** Where the queue's metrics go (see `MetricsProvider.workqueue`). Default: `noopMetrics`. */
  metrics?: MetricsProvider;
  /** The clock of every delay, and of the latency metrics. Default: `systemClock`. */
  clock?: Clock;
  /** Per-key backoff of `addRateLimited`: the first delay, in ms. Default: `5`. */
  baseDelayMs?: number;
  /** Per-key backoff of `addRateLimited`: the longest delay, in ms. Default: `1_000_000` (1000 s). */
  maxDelayMs?: number;
  /**
   * Overall limit of `addRateLimited` across all keys: re-adds per second
   * once the burst is spent (`Infinity`: no overall limit). Default: `10`.
   */
  qps?: number;
  /** Overall limit of `addRateLimited`: re-adds allowed at once. Default: `100`. */
  burst?: number;
}

interface Getter<K> {
  resolve(key: K | undefined): void;
}

const NO_METRICS: WorkQueueMetrics = { dispose() {} };

/**
 * A queue of keys to work on (client-go's rate-limiting `workqueue`):
 *
 * - a key is queued once however often it is added before a worker takes it;
 * - a key taken by `get()` is in progress until `done(key)`: no other
 *   `get()` returns it meanwhile, and a key added while in progress is
 *   queued again when it is done (so it is handled again, never twice at once);
 * - `addAfter(key, ms)` adds it later; `addRateLimited(key)` adds it after
 *   the longer of a per-key exponential backoff (`baseDelayMs · 2^n`, capped
 *   at `maxDelayMs`; `n` is `numRequeues(key)`, reset by `forget(key)`)
 *   and an overall token bucket (`qps`, `burst`);
 * - `shutdown()` ignores further adds, cancels delayed adds and makes
 *   waiting `get()`s return `undefined`; keys already queued are still
 *   handed out (as in client-go), then `get()` returns `undefined`.
 *   `shutDownWithDrain()` also waits until no key is in progress.
 *
 * Metrics (depth, adds, retries, queue and work durations) go to
 * `metrics.workqueue(name)`; they are disposed of on shutdown.
 *
 * @example A worker loop
 * ```ts
 * import assert from "node:assert/strict";
 * import { WorkQueue } from "../../mod.ts";
 *
 * const queue = new WorkQueue({ name: "demo" });
 * queue.add("default/a");
 * queue.add("default/a"); // already queued: one key
 * queue.add("default/b");
 * const handled: string[] = [];
 * const worker = (async () => {
 *   while (true) {
 *     const key = await queue.get(); // undefined once shut down and empty
 *     if (key === undefined) return;
 *     handled.push(key); // the work; on failure: queue.addRateLimited(key)
 *     queue.forget(key);
 *     queue.done(key);
 *   }
 * })();
 * await queue.shutDownWithDrain();
 * await worker;
 * assert.deepEqual(handled, ["default/a", "default/b"]);
 * ```
 */
export class WorkQueue<K = string> {
  /** The queue's name (its metrics label). */
  readonly name: string;
  readonly #clock: Clock;
  readonly #limiter: RateLimiter<K>;
  readonly #metrics: WorkQueueMetrics;
  #queue: K[] = [];
  #head = 0;
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #addedAt = new Map<K, number>();
  readonly #startedAt = new Map<K, number>();
  readonly #delayed = new Map<K, { at: number; timer: TimerHandle }>();
  readonly #getters: Getter<K>[] = [];
  #wakeQueued = false;
  #drainWaiters: (() => void)[] = [];
  #shuttingDown = false;
  #disposed = false;

  /**
   * Creates an empty queue.
   *
   * @throws {TypeError} when an option has the wrong type.
   * @throws {RangeError} when a delay, `qps` or `burst` is out of range.
   */
  constructor(options: WorkQueueOptions = {}) {
    const {
      name = "workqueue",
      metrics = noopMetrics,
      clock = systemClock,
      baseDelayMs = 5,
      maxDelayMs = 1_000_000,
      qps = 10,
      burst = 100,
    } = options ?? {};
    if (typeof name !== "string" || name === "") {
      throw new TypeError("WorkQueue: name must be a non-empty string");
    }
    if (typeof metrics?.reflector !== "function") {
      throw new TypeError("WorkQueue: metrics must be a MetricsProvider");
    }
    if (typeof clock?.now !== "function" || typeof clock.setTimeout !== "function") {
      throw new TypeError("WorkQueue: clock must be a Clock");
    }
    if (!(baseDelayMs > 0) || !Number.isFinite(baseDelayMs)) {
      throw new RangeError(
        `WorkQueue: baseDelayMs must be a finite number > 0, got ${baseDelayMs}`,
      );
    }
    if (!(maxDelayMs >= baseDelayMs) || !Number.isFinite(maxDelayMs)) {
      throw new RangeError(
        `WorkQueue: maxDelayMs must be a finite number >= baseDelayMs, got ${maxDelayMs}`,
      );
    }
    if (!(qps > 0)) throw new RangeError(`WorkQueue: qps must be > 0, got ${qps}`);
    if (!Number.isInteger(burst) || burst < 1) {
      throw new RangeError(`WorkQueue: burst must be an integer >= 1, got ${burst}`);
    }
    this.name = name;
    this.#clock = clock;
    const perKey = new ExponentialFailureRateLimiter<K>(baseDelayMs, maxDelayMs);
    this.#limiter = qps === Infinity
      ? perKey
      : new MaxOfRateLimiter<K>(perKey, new BucketRateLimiter<K>(qps, burst));
    this.#metrics = metrics.workqueue?.(name) ?? NO_METRICS;
  }

  /** Keys queued and not yet taken by `get()` (client-go's `Len`). */
  get length(): number {
    return this.#queue.length - this.#head;
  }

  /** True once `shutdown()` or `shutDownWithDrain()` was called. */
  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Queues `key`, unless it is already queued; ignored after shutdown. */
  add(key: K): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#observe((m) => m.add?.());
    if (!this.#addedAt.has(key)) this.#addedAt.set(key, this.#clock.now());
    this.#dirty.add(key);
    this.#depth();
    if (this.#processing.has(key)) return; // queued again by done()
    this.#push(key);
  }

  /**
   * Adds `key` after `ms` milliseconds (at once when `ms <= 0`). A key
   * already waiting keeps the earlier of its two times. Ignored after shutdown.
   *
   * @throws {RangeError} when `ms` is not a number.
   */
  addAfter(key: K, ms: number): void {
    if (typeof ms !== "number" || Number.isNaN(ms)) {
      throw new RangeError(`WorkQueue.addAfter: ms must be a number, got ${ms}`);
    }
    if (this.#shuttingDown) return;
    this.#observe((m) => m.retry?.());
    if (ms <= 0) return this.add(key);
    const at = this.#clock.now() + ms;
    const waiting = this.#delayed.get(key);
    if (waiting) {
      if (waiting.at <= at) return;
      this.#clock.clearTimeout(waiting.timer);
    }
    const timer = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    this.#delayed.set(key, { at, timer });
  }

  /** Adds `key` once the rate limiters allow (see the class doc); ignored after shutdown. */
  addRateLimited(key: K): void {
    if (this.#shuttingDown) return;
    this.addAfter(key, this.#limiter.when(key, this.#clock.now()));
  }

  /** Forgets `key`'s failures: its next `addRateLimited` starts from `baseDelayMs`. */
  forget(key: K): void {
    this.#limiter.forget(key);
  }

  /** How many times `key` was rate-limited since it was last forgotten. */
  numRequeues(key: K): number {
    return this.#limiter.numRequeues(key);
  }

  /**
   * The next key to work on; it stays in progress until `done(key)`.
   * Waits while the queue is empty. Resolves `undefined` once the queue is
   * shut down and empty; rejects with `signal.reason` when `signal` aborts
   * first (the wait is abandoned, no key is taken).
   */
  get(options: { signal?: AbortSignal } = {}): Promise<K | undefined> {
    const { signal } = options ?? {};
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.length > 0) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#getters.indexOf(getter);
        if (i >= 0) this.#getters.splice(i, 1);
        reject(signal!.reason);
      };
      const getter: Getter<K> = {
        resolve: (key) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(key);
        },
      };
      this.#getters.push(getter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Marks `key` as no longer in progress. If it was added meanwhile, it is
   * queued again now. A key not in progress is ignored.
   */
  done(key: K): void {
    if (!this.#processing.delete(key)) return;
    const started = this.#startedAt.get(key);
    this.#startedAt.delete(key);
    if (started !== undefined) {
      const durationMs = this.#clock.now() - started;
      this.#observe((m) => m.workDuration?.({ durationMs }));
    }
    if (this.#dirty.has(key)) this.#push(key);
    if (this.#processing.size === 0) this.#releaseDrain();
  }

  /**
   * Ignores further adds, cancels delayed adds, makes waiting `get()`s
   * resolve `undefined` and removes the queue's metrics. Keys already
   * queued are still handed out by `get()`. Idempotent.
   */
  shutdown(): void {
    this.#stop();
    this.#dispose();
  }

  /**
   * {@linkcode WorkQueue.shutdown}, then waits until no key is in progress
   * (each has been `done`). Rejects with `signal.reason` when `signal`
   * aborts first (the queue stays shut down).
   */
  async shutDownWithDrain(options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options ?? {};
    this.#stop();
    try {
      if (this.#processing.size === 0) return;
      signal?.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          this.#drainWaiters = this.#drainWaiters.filter((w) => w !== waiter);
          reject(signal!.reason);
        };
        const waiter = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        this.#drainWaiters.push(waiter);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } finally {
      this.#dispose();
    }
  }

  #stop(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) this.#clock.clearTimeout(timer);
    this.#delayed.clear();
    // keys queued in this tick go to waiting getters first; the others end now
    this.#wake();
    for (const g of this.#getters.splice(0)) g.resolve(undefined);
  }

  #push(key: K): void {
    this.#queue.push(key);
    // A waiting get() takes the key on a microtask, not inside add(): the
    // key stays queued until then, so adding it again in the same tick (an
    // update handler adds the old and the new object's key) is a duplicate,
    // as in client-go, rather than a second reconcile after this one.
    if (this.#getters.length > 0 && !this.#wakeQueued) {
      this.#wakeQueued = true;
      queueMicrotask(() => this.#wake());
    }
  }

  /** Hands queued keys to waiting `get()`s. */
  #wake(): void {
    this.#wakeQueued = false;
    while (this.#getters.length > 0 && this.length > 0) {
      this.#getters.shift()!.resolve(this.#take());
    }
  }

  #take(): K {
    const key = this.#queue[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#processing.add(key);
    this.#dirty.delete(key);
    const now = this.#clock.now();
    this.#startedAt.set(key, now);
    const added = this.#addedAt.get(key);
    this.#addedAt.delete(key);
    if (added !== undefined) {
      const durationMs = now - added;
      this.#observe((m) => m.queueDuration?.({ durationMs }));
    }
    this.#depth();
    return key;
  }

  #depth(): void {
    const depth = this.#dirty.size;
    this.#observe((m) => m.depth?.(depth));
  }

  #releaseDrain(): void {
    for (const w of this.#drainWaiters.splice(0)) w();
  }

  #dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      this.#metrics.dispose();
    } catch { /* metrics never break the queue */ }
  }

  #observe(f: (m: WorkQueueMetrics) => void): void {
    if (this.#disposed) return; // a late call must not resurrect a series
    try {
      f(this.#metrics);
    } catch { /* metrics never break the queue */ }
  }
}
