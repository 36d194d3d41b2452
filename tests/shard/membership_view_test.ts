import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  graceOf,
  type MemberObservation,
  type MembershipView,
  membershipView,
  type SelfState,
} from "../../src/shard/_membership_view.ts";

const timing = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, graceMs: 12_000 };
/** Joined at 0, renewed and listed at `at` (by default 100 s). */
const self = (over: Partial<SelfState> = {}): SelfState => ({
  joinedAt: 0,
  lastRenewStartedAt: 100_000,
  lastListStartedAt: 100_000,
  ...over,
});
const other = (
  holderIdentity: string,
  observedAt: number,
  leaseDurationMs = 15_000,
  renewDeadlineMs?: number,
  retryPeriodMs?: number,
): MemberObservation => ({
  holderIdentity,
  observedAt,
  leaseDurationMs,
  ...(renewDeadlineMs === undefined ? {} : { renewDeadlineMs }),
  ...(retryPeriodMs === undefined ? {} : { retryPeriodMs }),
});
/** Joined at 100 s, renewed and listed at 110 s. */
const joiner = (over: Partial<SelfState> = {}) =>
  self({ joinedAt: 100_000, lastRenewStartedAt: 110_000, lastListStartedAt: 110_000, ...over });

// deno-fmt-ignore
const rows: [string, number, SelfState, MemberObservation[], Omit<MembershipView, "changesAt">, number?][] = [
  ["healthy, past grace, alone: owns, member of itself", 101_000, self(), [], { healthy: true, members: ["me"], owning: true }, 110_000],
  ["healthy with two live others: sorted members", 101_000, self(), [other("b", 99_000), other("a", 100_500)], { healthy: true, members: ["a", "b", "me"], owning: true }, 110_000],
  ["not joined yet: nothing", 0, { joinedAt: undefined, lastRenewStartedAt: undefined, lastListStartedAt: undefined }, [], { healthy: false, members: [], owning: false }],
  ["renewed but never listed: unhealthy", 101_000, self({ lastListStartedAt: undefined }), [], { healthy: false, members: [], owning: false }],
  ["in grace (joined 11.9 s ago): healthy, a member, not owning; changes at the grace's end", 111_900, self({ joinedAt: 100_000, lastRenewStartedAt: 110_000, lastListStartedAt: 110_000 }), [], { healthy: true, members: ["me"], owning: false }, 112_000],
  ["grace over (joined 12 s ago): owns", 112_000, self({ joinedAt: 100_000, lastRenewStartedAt: 110_000, lastListStartedAt: 110_000 }), [], { healthy: true, members: ["me"], owning: true }, 120_000],
  ["last renewal started 9.999 s ago: healthy", 109_999, self({ lastListStartedAt: 109_000 }), [], { healthy: true, members: ["me"], owning: true }, 110_000],
  ["last renewal started 10 s ago: unhealthy, owns nothing, not a member", 110_000, self({ lastListStartedAt: 109_000 }), [other("a", 108_000)], { healthy: false, members: ["a"], owning: false }],
  ["last list started 10 s ago: unhealthy", 110_000, self({ lastRenewStartedAt: 109_000 }), [], { healthy: false, members: [], owning: false }],
  ["clock jumped a minute on: unhealthy", 160_000, self(), [other("a", 99_000)], { healthy: false, members: ["a"], owning: false }],
  ["another seen unchanged for 14.9 s by the last list's start: live", 101_000, self(), [other("a", 85_100)], { healthy: true, members: ["a", "me"], owning: true }, 110_000],
  ["another seen unchanged for 15 s by the last list's start: expired", 101_000, self(), [other("a", 85_000)], { healthy: true, members: ["me"], owning: true }, 110_000],
  ["another unchanged for 20 s by now, but only 14 s by the last list's start: still live (a view may miss a renewal)", 105_000, self(), [other("a", 86_000)], { healthy: true, members: ["a", "me"], owning: true }, 110_000],
  ["another with its own 60 s duration, unchanged for 20 s: live", 101_000, self(), [other("a", 80_000, 60_000)], { healthy: true, members: ["a", "me"], owning: true }, 110_000],
  ["another that wrote no duration: the group's counts", 101_000, self(), [other("a", 85_000, 0), other("b", 86_000, 0)], { healthy: true, members: ["b", "me"], owning: true }, 110_000],
  ["a released Lease (no holder): not a member", 101_000, self(), [other("", 100_500)], { healthy: true, members: ["me"], owning: true }, 110_000],
  ["two Leases of one holder: one member", 101_000, self(), [other("a", 100_500), other("a", 99_000)], { healthy: true, members: ["a", "me"], owning: true }, 110_000],
  // mixed timings: a joiner's grace covers the renew deadline (+ retry period) written in each live member's Lease
  ["in grace: a live member wrote a 20 s deadline and a 3 s retry period: a grace of 23 s, not 12 s", 112_000, joiner(), [other("a", 109_000, 30_000, 20_000, 3_000)], { healthy: true, members: ["a", "me"], owning: false }, 120_000],
  ["... 23 s after joining: owns", 123_000, joiner({ lastRenewStartedAt: 122_000, lastListStartedAt: 122_000 }), [other("a", 121_000, 30_000, 20_000, 3_000)], { healthy: true, members: ["a", "me"], owning: true }, 132_000],
  ["a deadline written without a retry period: the deadline alone (12.5 s)", 112_400, joiner(), [other("a", 109_000, 15_000, 12_500)], { healthy: true, members: ["a", "me"], owning: false }, 112_500],
  ["a shorter deadline among the members: its own grace (12 s)", 112_000, joiner(), [other("a", 109_000, 15_000, 5_000, 1_000)], { healthy: true, members: ["a", "me"], owning: true }, 120_000],
  ["the deadline of an expired Lease does not count", 112_000, joiner(), [other("a", 90_000, 15_000, 60_000, 1_000)], { healthy: true, members: ["me"], owning: true }, 120_000],
  ["the grace fixed by its first list after joining wins over the members listed since", 112_000, joiner({ graceMs: 12_000 }), [other("a", 109_000, 30_000, 20_000, 3_000)], { healthy: true, members: ["a", "me"], owning: true }, 120_000],
  ["a Lease naming me (not mine): ignored", 101_000, self({ lastRenewStartedAt: 90_000 }), [other("me", 100_500)], { healthy: false, members: [], owning: false }],
];

test("membership view: health, members and ownership from what a member observed (table)", () => {
  for (const [name, now, s, others, expected, changesAt] of rows) {
    const view = membershipView({ now, timing, identity: "me", self: s, others });
    assert.deepEqual(
      { healthy: view.healthy, members: view.members, owning: view.owning },
      expected,
      name,
    );
    assert.equal(view.changesAt, changesAt, `${name}: changesAt`);
  }
});

test("membership view: a grace of at least each live member's renew deadline plus retry period (table)", () => {
  // deno-fmt-ignore
  const rows: [string, number, MemberObservation[], number][] = [
    ["no others: its own", 12_000, [], 12_000],
    ["no annotations (an older version): its own", 12_000, [other("a", 0), other("b", 0)], 12_000],
    ["the largest deadline + retry period", 12_000, [other("a", 0, 15_000, 10_000, 2_000), other("b", 0, 60_000, 40_000, 5_000), other("c", 0, 15_000, 14_000)], 45_000],
    ["never below its own", 30_000, [other("a", 0, 15_000, 10_000, 2_000)], 30_000],
    ["a retry period alone (no deadline) does not count", 12_000, [other("a", 0, 15_000, 0, 20_000)], 12_000],
  ];
  for (const [name, own, others, expected] of rows) {
    assert.equal(graceOf(own, others), expected, name);
  }
});
