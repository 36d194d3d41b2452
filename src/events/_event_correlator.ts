/**
 * The pure part of event recording, as client-go's event correlator does
 * it: a token bucket per object (its spam filter) and the aggregation of
 * identical events into one series within a window. No I/O, no clock: the
 * caller passes `now`.
 *
 * @module
 */

/** One aggregated Event as the recorder knows it: what it says and where it stands on the server. */
export interface EventSeries {
  /** The aggregation key (object, type, reason, action, note, related). */
  readonly key: string;
  /** The Event's name (changed when a patch finds it gone and it is created again). */
  name: string;
  /** The Event's namespace. */
  readonly namespace: string;
  /** What the Event says (bodies are built from it when it is written). */
  readonly content: unknown;
  /** Times observed within the window. */
  count: number;
  /** First observation (ms since the epoch). */
  readonly firstTime: number;
  /** Last observation (ms since the epoch). */
  lastTime: number;
  /** Whether an Event exists on the server for it (set by the recorder). */
  created: boolean;
  /** Whether a write of it waits in the recorder's queue (set by the recorder). */
  pending: boolean;
}

/** What to do with one call. */
export type CorrelatorDecision =
  | { kind: "drop"; reason: "rateLimited" | "queueFull" }
  /** A new series: queue a write that creates its Event. */
  | { kind: "create"; series: EventSeries }
  /** An existing series, counted once more: queue a write unless one is pending (it writes the latest count). */
  | { kind: "update"; series: EventSeries; enqueue: boolean };

/** The limits of a correlator. */
export interface CorrelatorLimits {
  /** Identical events within this span of the previous one join its series, in ms. */
  windowMs: number;
  /** Tokens of a bucket when full (events an object may have in a burst). */
  burst: number;
  /** One token comes back every this many ms. */
  refillMs: number;
  /** Most keys kept in each of the two caches (least recently used go first). */
  cacheSize: number;
}

/** One call, as the correlator sees it. */
export interface CorrelatorCall {
  /** The rate-limit key: the object (and the reporting component). */
  spamKey: string;
  /** The aggregation key. */
  key: string;
  /** The Event's namespace. */
  namespace: string;
  /** What the Event says. */
  content: unknown;
  /** A fresh Event name, asked for only when a series starts. */
  newName: () => string;
  /** Whether the recorder's queue has room for one more write. */
  queueHasRoom: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** A map that forgets its least recently used keys beyond `max`. */
class Lru<V> {
  readonly #map = new Map<string, V>();
  constructor(readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.max) this.#map.delete(this.#map.keys().next().value!);
  }
  get size(): number {
    return this.#map.size;
  }
}

/** The correlator's state: two bounded caches. */
export class EventCorrelator {
  readonly #limits: CorrelatorLimits;
  readonly #buckets: Lru<Bucket>;
  readonly #series: Lru<EventSeries>;

  constructor(limits: CorrelatorLimits) {
    this.#limits = limits;
    this.#buckets = new Lru(limits.cacheSize);
    this.#series = new Lru(limits.cacheSize);
  }

  /** Keys held (rate-limit buckets, series), for tests of the bound. */
  get sizes(): { buckets: number; series: number } {
    return { buckets: this.#buckets.size, series: this.#series.size };
  }

  /**
   * Decides one call at `now` and updates the state: a full queue drops
   * it (unless its series already waits there), then an empty bucket
   * drops it, else it joins the live series or starts a new one.
   */
  decide(call: CorrelatorCall, now: number): CorrelatorDecision {
    const { windowMs, burst, refillMs } = this.#limits;
    const found = this.#series.get(call.key);
    const live = found && now - found.lastTime <= windowMs && now >= found.firstTime
      ? found
      : undefined;
    if (!(live?.pending) && !call.queueHasRoom) return { kind: "drop", reason: "queueFull" };

    const bucket = this.#buckets.get(call.spamKey) ?? { tokens: burst, at: now };
    const refilled = Math.min(burst, bucket.tokens + Math.max(0, now - bucket.at) / refillMs);
    if (refilled < 1) {
      this.#buckets.set(call.spamKey, { tokens: refilled, at: Math.max(now, bucket.at) });
      return { kind: "drop", reason: "rateLimited" };
    }
    this.#buckets.set(call.spamKey, { tokens: refilled - 1, at: Math.max(now, bucket.at) });

    if (live) {
      live.count++;
      live.lastTime = Math.max(live.lastTime, now);
      return { kind: "update", series: live, enqueue: !live.pending };
    }
    const series: EventSeries = {
      key: call.key,
      name: call.newName(),
      namespace: call.namespace,
      content: call.content,
      count: 1,
      firstTime: now,
      lastTime: now,
      created: false,
      pending: false,
    };
    this.#series.set(call.key, series);
    return { kind: "create", series };
  }
}
