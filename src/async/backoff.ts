import { type Clock, systemClock } from "./clock.ts";
import { unit } from "./_async.ts";

/**
 * Options of {@linkcode Backoff}; the defaults are client-go's reflector values.
 */
export interface BackoffOptions {
  /** The first delay. Default: `800` ms. */
  initialMs?: number;
  /** Growth per failure. Default: `2`. */
  factor?: number;
  /** The largest base delay (before jitter). Default: `30_000` ms. */
  capMs?: number;
  /** Adds up to `jitter × delay` at random. Default: `1.0`. */
  jitter?: number;
  /**
   * After this long without a failure, start again from `initialMs`
   * (`Infinity`: never). Default: `120_000` ms.
   */
  resetAfterMs?: number;
  /** Clock for the reset rule. Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1). Default: `Math.random`. */
  random?: () => number;
}

/**
 * The numbers of {@linkcode Backoff} when none is given: client-go's
 * reflector backoff (800 ms doubling up to 30 s, full jitter, reset after
 * two healthy minutes). Internal: the reflector's `WATCHER_DEFAULTS.backoff`
 * is this object.
 */
export const BACKOFF_DEFAULTS: Readonly<Required<Omit<BackoffOptions, "clock" | "random">>> = Object
  .freeze({
    initialMs: 800,
    factor: 2,
    capMs: 30_000,
    jitter: 1.0,
    resetAfterMs: 120_000,
  });

function check(name: string, value: number, min: number, infinite = false): number {
  if (!(Number.isFinite(value) || (infinite && value === Infinity)) || value < min) {
    throw new RangeError(`Backoff: ${name} must be a finite number >= ${min}, got ${value}`);
  }
  return value;
}

/**
 * Jittered exponential backoff with a reset after a healthy stretch, as
 * client-go's `exponentialBackoffManager`: each delay `factor` times the
 * previous one up to `capMs`, plus up to `jitter` times itself at random;
 * back to `initialMs` once `resetAfterMs` has passed since the previous
 * failure (the defaults, client-go's: {@linkcode BackoffOptions}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Backoff } from "../../mod.ts";
 * import { ManualClock } from "../../testkit.ts";
 *
 * const clock = new ManualClock();
 * const backoff = new Backoff({ clock, random: () => 0 }); // no jitter drawn: the base delays
 * assert.deepEqual([backoff.next(), backoff.next(), backoff.next()], [800, 1_600, 3_200]);
 * for (let i = 0; i < 10; i++) backoff.next();
 * assert.equal(backoff.next(), 30_000); // capped
 * await clock.advance(120_000); // two minutes without a failure
 * assert.equal(backoff.next(), 800);
 * ```
 */
export class Backoff {
  readonly #initial: number;
  readonly #factor: number;
  readonly #cap: number;
  readonly #jitter: number;
  readonly #resetAfter: number;
  readonly #clock: Clock;
  readonly #random: () => number;
  #current: number;
  #lastFailure = -Infinity;

  /**
   * Creates a backoff; each option not given takes the default of
   * {@linkcode BackoffOptions}.
   *
   * @throws {RangeError} when a number is not finite (but `resetAfterMs`
   *   may be `Infinity`) or below its minimum (`capMs` below `initialMs`,
   *   `factor` below 1, anything negative).
   */
  constructor(options: BackoffOptions = {}) {
    const D = BACKOFF_DEFAULTS;
    const {
      capMs = D.capMs,
      // a cap below the default first delay lowers the first delay too
      initialMs = typeof capMs === "number" && capMs < D.initialMs ? capMs : D.initialMs,
      factor = D.factor,
      jitter = D.jitter,
      resetAfterMs = D.resetAfterMs,
      clock = systemClock,
      random = Math.random,
    } = options;
    this.#initial = check("initialMs", initialMs, 0);
    this.#factor = check("factor", factor, 1);
    this.#cap = check("capMs", capMs, initialMs);
    this.#jitter = check("jitter", jitter, 0);
    this.#resetAfter = check("resetAfterMs", resetAfterMs, 0, true);
    this.#clock = clock;
    this.#random = random;
    this.#current = this.#initial;
  }

  /** The delay to wait after a failure that happens now. */
  next(): number {
    const now = this.#clock.now();
    if (now - this.#lastFailure >= this.#resetAfter) this.#current = this.#initial;
    this.#lastFailure = now;
    const base = this.#current;
    this.#current = Math.min(this.#cap, this.#current * this.#factor);
    return base + unit(this.#random()) * this.#jitter * base;
  }

  /** Forgets past failures: the next delay is `initialMs` again. */
  reset(): void {
    this.#current = this.#initial;
    this.#lastFailure = -Infinity;
  }
}
