import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { resolveHealthOptions } from "../../src/health/health_options.ts";
import { formatDuration, healthReport, healthText } from "../../src/health/health_report.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { ManualClock } from "../../testkit.ts";
import { type FakeInformer, fakeInformer, START } from "./_fake_informer.ts";

const STALE = 60_000;

test("formatDuration prints durations as Go does, in whole seconds", () => {
  const cases: Array<[number, string]> = [
    [0, "0ms"],
    [999, "999ms"],
    [1_000, "1s"],
    [1_999, "1s"],
    [59_000, "59s"],
    [60_000, "1m0s"],
    [372_000, "6m12s"],
    [3_600_000, "1h0m0s"],
    [3_605_000, "1h0m5s"],
    [93_784_000, "26h3m4s"],
    [-5, "0s"],
    [NaN, "0s"],
  ];
  for (const [ms, text] of cases) assert.equal(formatDuration(ms), text, `${ms}`);
});

test("healthReport judges each informer for liveness and readiness (table)", () => {
  const old = new KubeStatusError({ code: 500, request: "GET /api/v1/configmaps" });
  const recent = new KubeStatusError({
    code: 403,
    request: "GET /api/v1/configmaps",
    status: {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      code: 403,
      reason: "Forbidden",
      message: 'configmaps is forbidden: User "x" cannot list resource "configmaps"',
    },
  });
  type Case = [string, Partial<FakeInformer>, number, string | undefined, string | undefined];
  // [what, informer, ms after START, livez failure, readyz failure]
  const cases: Case[] = [
    ["watching and synced", {}, 10 * STALE, undefined, undefined],
    [
      "a quiet watch: no event for a day is healthy",
      { lastEventAt: START - 86_400_000 },
      10 * STALE,
      undefined,
      undefined,
    ],
    ["waiting, exactly staleAfterMs", { state: "waiting" }, STALE, undefined, undefined],
    [
      "waiting, 1 ms past staleAfterMs",
      { state: "waiting" },
      STALE + 1,
      "not watching for 1m0s (waiting)",
      "not watching for 1m0s (waiting)",
    ],
    [
      "connecting past staleAfterMs, with the error since it stopped watching",
      { state: "connecting", lastError: { error: recent, phase: "watch", at: START + 5 } },
      372_000,
      `not watching for 6m12s (connecting: KubeStatusError: ${recent.message})`,
      `not watching for 6m12s (connecting: KubeStatusError: ${recent.message})`,
    ],
    [
      "an error from before it stopped watching is not named",
      { state: "waiting", lastError: { error: old, phase: "watch", at: START - 1 } },
      STALE + 1,
      "not watching for 1m0s (waiting)",
      "not watching for 1m0s (waiting)",
    ],
    [
      "events while not watching (a streaming list) do not count as progress",
      { state: "listing", lastEventAt: START + STALE },
      STALE + 1,
      "not watching for 1m0s (listing)",
      "not watching for 1m0s (listing)",
    ],
    [
      "listing, not synced yet: live but not ready",
      { state: "listing", synced: false },
      5_000,
      undefined,
      "not synced (listing; not watching for 5s)",
    ],
    [
      "not synced, failing: the error is named",
      {
        state: "waiting",
        synced: false,
        lastError: { error: recent, phase: "list", at: START + 10 },
      },
      5_000,
      undefined,
      `not synced (waiting; not watching for 5s; last error: KubeStatusError: ${recent.message})`,
    ],
    [
      "stopped: neither live nor ready, at once",
      { state: "stopped" },
      0,
      "stopped (not running; not watching for 0ms)",
      "stopped (not running; not watching for 0ms)",
    ],
    [
      "stopped after a failure",
      { state: "stopped", lastError: { error: "boom", phase: "list", at: START } },
      2_000,
      "stopped (not running; not watching for 2s; last error: boom)",
      "stopped (not running; not watching for 2s; last error: boom)",
    ],
  ];
  for (const [what, init, after, liveFailure, readyFailure] of cases) {
    const clock = new ManualClock(START + after);
    const options = resolveHealthOptions({
      informers: [fakeInformer("configmaps", init)],
      staleAfterMs: STALE,
      clock,
    });
    for (const [probe, failure] of [["livez", liveFailure], ["readyz", readyFailure]] as const) {
      const report = healthReport(options, probe);
      assert.equal(report.ok, failure === undefined, `${what} (${probe})`);
      assert.equal(report.checks[0].message, failure, `${what} (${probe})`);
    }
  }
});

test("healthReport gives the facts of each informer as milliseconds ago", () => {
  const clock = new ManualClock(START + 9_000);
  const inf = fakeInformer("pods", {
    state: "waiting",
    synced: true,
    since: START + 1_000,
    lastEventAt: START + 500,
    lastError: { error: new Error("connection refused"), phase: "watch", at: START + 2_000 },
  });
  const report = healthReport(resolveHealthOptions({ informers: [inf], clock }), "readyz");
  assert.deepEqual(report, {
    probe: "readyz",
    ok: true,
    checks: [{
      name: "pods",
      ok: true,
      informer: {
        synced: true,
        state: "waiting",
        watching: false,
        sinceMsAgo: 8_000,
        lastEventMsAgo: 8_500,
        lastError: { message: "connection refused", phase: "watch", msAgo: 7_000 },
      },
    }],
  });
});

test("healthReport: extra checks count for readiness, and for liveness only when live", () => {
  const clock = new ManualClock(START);
  let leader = false;
  const options = resolveHealthOptions({
    informers: [fakeInformer("configmaps")],
    clock,
    checks: [
      {
        name: "leader",
        check: () => ({ ok: leader, message: leader ? "leading" : "not the leader" }),
      },
      { name: "workers", check: () => ({ ok: true }), live: true },
    ],
  });
  assert.deepEqual(healthReport(options, "livez").checks.map((c) => c.name), [
    "configmaps",
    "workers",
  ]);
  const ready = healthReport(options, "readyz");
  assert.equal(ready.ok, false);
  assert.equal(
    healthText(ready),
    "[+]configmaps ok\n[-]leader failed: not the leader\n[+]workers ok\nreadyz check failed\n",
  );
  leader = true;
  const again = healthReport(options, "healthz");
  assert.equal(again.ok, true);
  assert.deepEqual(again.checks[1], { name: "leader", ok: true, message: "leading" });
  assert.equal(
    healthText(again),
    "[+]configmaps ok\n[+]leader ok\n[+]workers ok\nhealthz check passed\n",
  );
});

test("healthReport: a check that throws or answers nonsense fails, and so does an informer whose status throws", () => {
  const clock = new ManualClock(START);
  const broken = {
    name: "broken",
    hasSynced: () => true,
    get status(): never {
      throw new TypeError("no status today");
    },
  };
  const options = resolveHealthOptions({
    informers: [broken],
    clock,
    checks: [
      {
        name: "throws",
        check: () => {
          throw new RangeError("out of range");
        },
        live: true,
      },
      { name: "nonsense", check: () => undefined as unknown as { ok: boolean }, live: true },
      {
        name: "thrown-object",
        check: () => {
          throw { secret: "hunter2" };
        },
        live: true,
      },
    ],
  });
  const report = healthReport(options, "livez");
  assert.equal(report.ok, false);
  assert.deepEqual(report.checks, [
    { name: "broken", ok: false, message: "status unreadable: TypeError: no status today" },
    { name: "throws", ok: false, message: "check threw: RangeError: out of range" },
    { name: "nonsense", ok: false, message: "check returned no { ok } result" },
    { name: "thrown-object", ok: false, message: "check threw: a thrown object" },
  ]);
});

test("healthReport: an empty set of informers and checks passes", () => {
  const options = resolveHealthOptions({ informers: [], clock: new ManualClock(0) });
  assert.deepEqual(healthReport(options, "livez"), { probe: "livez", ok: true, checks: [] });
  assert.equal(healthText(healthReport(options, "readyz")), "readyz check passed\n");
});
