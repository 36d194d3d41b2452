import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Backoff, BACKOFF_DEFAULTS } from "../../src/async/backoff.ts";
import { WATCHER_DEFAULTS } from "../../src/reflector/watcher_defaults.ts";
import type { Clock } from "../../src/async/clock.ts";

function manualClock(): Clock & { advance(ms: number): void } {
  let now = 0;
  return {
    now: () => now,
    setTimeout: () => 0,
    clearTimeout: () => {},
    advance(ms: number) {
      now += ms;
    },
  };
}

test("backoff doubles from 800 ms and caps at 30 s, with client-go's defaults", () => {
  const b = new Backoff({ random: () => 0, clock: manualClock() });
  const delays = Array.from({ length: 8 }, () => b.next());
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
});

test("backoff jitter adds up to 100% of the base delay", () => {
  const b = new Backoff({ random: () => 0.999, clock: manualClock() });
  const d = b.next();
  assert.ok(d > 1590 && d < 1600, `got ${d}`);
  const spread = new Backoff({ clock: manualClock() });
  const samples = new Set(Array.from({ length: 20 }, () => {
    spread.reset();
    return Math.round(spread.next());
  }));
  assert.ok(samples.size > 10, "jitter spreads the delays");
});

test("backoff resets to the initial delay after two healthy minutes", () => {
  const clock = manualClock();
  const b = new Backoff({ random: () => 0, clock });
  b.next();
  b.next();
  clock.advance(119_000);
  assert.equal(b.next(), 3200, "still within the reset window");
  clock.advance(120_000);
  assert.equal(b.next(), 800);
});

test("backoff options are validated at construction", () => {
  assert.throws(() => new Backoff({ initialMs: -1 }), RangeError);
  assert.throws(() => new Backoff({ factor: 0.5 }), RangeError);
  assert.throws(() => new Backoff({ jitter: Number.NaN }), RangeError);
  assert.throws(() => new Backoff({ initialMs: 1000, capMs: 10 }), RangeError);
});

test("backoff with resetAfterMs Infinity never starts again by itself, only by reset()", () => {
  const clock = manualClock();
  const b = new Backoff({ random: () => 0, clock, resetAfterMs: Infinity });
  b.next();
  clock.advance(10 * 365 * 86_400_000);
  assert.equal(b.next(), 1600);
  b.reset();
  assert.equal(b.next(), 800);
  assert.throws(
    () => new Backoff({ capMs: Infinity }),
    RangeError,
    "only resetAfterMs may be infinite",
  );
});

test("WATCHER_DEFAULTS.backoff is a bare Backoff's defaults: one set of client-go's numbers", () => {
  assert.equal(WATCHER_DEFAULTS.backoff, BACKOFF_DEFAULTS);
  assert.deepEqual({ ...BACKOFF_DEFAULTS }, {
    initialMs: 800,
    factor: 2,
    capMs: 30_000,
    jitter: 1.0,
    resetAfterMs: 120_000,
  });
});
