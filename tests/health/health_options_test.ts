import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  HEALTH_DEFAULTS,
  type HealthOptions,
  resolveHealthOptions,
} from "../../src/health/health_options.ts";
import { systemClock } from "../../src/async/clock.ts";
import { ManualClock } from "../../testkit.ts";
import { fakeInformer } from "./_fake_informer.ts";

test("resolveHealthOptions fills in the defaults and copies the arrays", () => {
  const informers = [fakeInformer("pods")];
  const r = resolveHealthOptions({ informers });
  assert.equal(r.staleAfterMs, HEALTH_DEFAULTS.staleAfterMs);
  assert.equal(r.staleAfterMs, 300_000);
  assert.equal(r.path, "");
  assert.equal(r.clock, systemClock);
  assert.deepEqual(r.checks, []);
  assert.notEqual(r.informers, informers);
  informers.push(fakeInformer("later"));
  assert.equal(r.informers.length, 1);
  assert.ok(Object.isFrozen(HEALTH_DEFAULTS));
});

test("resolveHealthOptions keeps what it is given", () => {
  const clock = new ManualClock(0);
  const check = { name: "leader", check: () => ({ ok: true }), live: true };
  const r = resolveHealthOptions({
    informers: [],
    staleAfterMs: 1_000,
    clock,
    checks: [check],
    path: "/health/v1",
  });
  assert.deepEqual(r, {
    informers: [],
    staleAfterMs: 1_000,
    clock,
    checks: [check],
    path: "/health/v1",
  });
  assert.equal(
    resolveHealthOptions({ informers: [], staleAfterMs: 86_400_000 }).staleAfterMs,
    86_400_000,
  );
});

test("resolveHealthOptions rejects invalid options, naming the option", () => {
  const ok = { name: "c", check: () => ({ ok: true }) };
  const cases: Array<[string, unknown, typeof TypeError | typeof RangeError, RegExp]> = [
    ["no options", undefined, TypeError, /options must be an object/],
    ["no informers", {}, TypeError, /informers must be an array/],
    [
      "an informer without hasSynced",
      { informers: [{ name: "a", status: {} }] },
      TypeError,
      /informers\[0\]/,
    ],
    [
      "an informer without status",
      { informers: [{ name: "a", hasSynced: () => true }] },
      TypeError,
      /informers\[0\]/,
    ],
    [
      "an informer without a name",
      { informers: [{ hasSynced: () => true, status: {} }] },
      TypeError,
      /informers\[0\]/,
    ],
    [
      "staleAfterMs a string",
      { informers: [], staleAfterMs: "5m" },
      TypeError,
      /staleAfterMs must be a number/,
    ],
    [
      "staleAfterMs too short",
      { informers: [], staleAfterMs: 999 },
      RangeError,
      /staleAfterMs must be in \[1000, 86400000\]/,
    ],
    [
      "staleAfterMs too long",
      { informers: [], staleAfterMs: 86_400_001 },
      RangeError,
      /staleAfterMs/,
    ],
    ["staleAfterMs NaN", { informers: [], staleAfterMs: NaN }, RangeError, /staleAfterMs/],
    [
      "staleAfterMs Infinity",
      { informers: [], staleAfterMs: Infinity },
      RangeError,
      /staleAfterMs/,
    ],
    ["a clock without now", { informers: [], clock: {} }, TypeError, /clock must be a Clock/],
    ["checks not an array", { informers: [], checks: ok }, TypeError, /checks must be an array/],
    [
      "a check without check()",
      { informers: [], checks: [{ name: "x" }] },
      TypeError,
      /checks\[0\] must have a check/,
    ],
    [
      "a check without a name",
      { informers: [], checks: [{ check: ok.check }] },
      TypeError,
      /checks\[0\]\.name/,
    ],
    [
      "a check named with a space",
      { informers: [], checks: [ok, { name: "a b", check: ok.check }] },
      TypeError,
      /checks\[1\]\.name/,
    ],
    [
      "a check named with a newline",
      { informers: [], checks: [{ name: "a\n", check: ok.check }] },
      TypeError,
      /checks\[0\]\.name/,
    ],
    [
      "live not a boolean",
      { informers: [], checks: [{ ...ok, live: "yes" }] },
      TypeError,
      /checks\[0\]\.live/,
    ],
    ["path a number", { informers: [], path: 1 }, TypeError, /path must be a string/],
    [
      "path without a leading slash",
      { informers: [], path: "health" },
      TypeError,
      /path must be ""/,
    ],
    [
      "path with a trailing slash",
      { informers: [], path: "/health/" },
      TypeError,
      /path must be ""/,
    ],
    ["path of a slash", { informers: [], path: "/" }, TypeError, /path must be ""/],
    ["path with a query", { informers: [], path: "/health?x" }, TypeError, /path must be ""/],
  ];
  for (const [what, options, type, message] of cases) {
    assert.throws(() => resolveHealthOptions(options as HealthOptions), (err: unknown) => {
      assert.ok(err instanceof type, `${what}: ${err}`);
      assert.match((err as Error).message, message, what);
      assert.match((err as Error).message, /^healthHandler: /, what);
      return true;
    });
  }
});
