import type { Clock, TimerHandle } from "../async/clock.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Lets every promise reaction and zero-delay task that is ready run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * A clock that moves only when told to: inject it as the `clock` option of a
 * watcher, reflector or informer, and drive backoff, resync, idle and list
 * deadlines from the test, with no wall-clock waits. `advance(ms)` fires
 * every timer that falls due, in order, moving `now()` to each one's time
 * and letting the code it wakes run before the next.
 *
 * @example Drive an informer's resync without waiting
 * ```ts
 * import assert from "node:assert/strict";
 * import { Informer, KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer, ManualClock } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "fx" },
 * });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const clock = new ManualClock();
 * const informer = new Informer(lw, { name: "configmaps", resyncPeriodMs: 60_000, clock });
 * let resyncs = 0;
 * informer.addEventHandler({ onUpdate: (oldObj, obj) => void (oldObj === obj && resyncs++) });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * await informer.waitForSync();
 * await clock.advance(59_999);
 * assert.equal(resyncs, 0);
 * await clock.advance(1); // the resync period has passed: every object is delivered again
 * assert.equal(resyncs, 1);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, Timer>();

  /**
   * Creates a clock standing at `start`; it moves only with `advance`.
   *
   * @param start The initial `now()`, in ms. Default: `0`.
   */
  constructor(start = 0) {
    this.#now = start;
  }

  /** The current fake time, in ms. */
  now(): number {
    return this.#now;
  }

  /** Schedules `fn` at `now() + ms`; it fires during a later `advance`. */
  setTimeout(fn: () => void, ms: number): TimerHandle {
    if (typeof ms !== "number" || Number.isNaN(ms) || ms === Infinity) {
      throw new RangeError(`ManualClock.setTimeout: delay must be a finite number, got ${ms}`);
    }
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + Math.max(0, ms), seq, fn });
    return seq;
  }

  /** Cancels a timer; unknown handles are ignored. */
  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** How many timers are waiting. */
  get pendingTimers(): number {
    return this.#timers.size;
  }

  /** When the next timer falls due, or `undefined` when none waits. */
  get nextTimerAt(): number | undefined {
    let at: number | undefined;
    for (const t of this.#timers.values()) if (at === undefined || t.at < at) at = t.at;
    return at;
  }

  /**
   * Moves time forward by `ms`, firing each timer that falls due in order
   * (timers set by those timers too, when they fall within the span), and
   * lets the woken code run after each.
   */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0) || !Number.isFinite(ms)) {
      throw new RangeError(`ManualClock.advance: ms must be a finite number >= 0, got ${ms}`);
    }
    const target = this.#now + ms;
    await settle();
    while (true) {
      const due = this.#earliest(target);
      if (!due) break;
      this.#timers.delete(due.seq);
      this.#now = due.at;
      due.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }

  /** Lets ready work run without moving time. */
  async flush(): Promise<void> {
    await settle();
    await settle();
  }

  #earliest(limit: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers.values()) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
