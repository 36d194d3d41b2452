import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { decide, type Decision, type Observation } from "../../src/leader/_leader_decision.ts";
import type { LeaseRecord } from "../../src/leader/_lease_record.ts";
import { microTime, recordOf, specOf } from "../../src/leader/_lease_record.ts";

const held = (holder: string, over: Partial<LeaseRecord> = {}): LeaseRecord => ({
  holderIdentity: holder,
  leaseDurationSeconds: 15,
  acquireTime: 1_000,
  renewTime: 5_000,
  leaseTransitions: 3,
  ...over,
});
const at = (record: LeaseRecord | undefined, changedAt: number, now: number): Observation => ({
  record,
  changedAt,
  now,
});

// deno-fmt-ignore
const rows: [string, Observation, Decision["kind"], Partial<LeaseRecord>?][] = [
  ["no lease: create it, held by me, no transition", at(undefined, 0, 100_000), "create", { holderIdentity: "me", leaseTransitions: 0, acquireTime: 100_000, renewTime: 100_000, leaseDurationSeconds: 15 }],
  ["held by another, changed 14.9 s ago: wait", at(held("other"), 85_100, 100_000), "wait"],
  ["held by another, unchanged for 15 s (its duration): take it, one more transition", at(held("other"), 85_000, 100_000), "update", { holderIdentity: "me", leaseTransitions: 4, acquireTime: 100_000, renewTime: 100_000 }],
  ["held by another with a 60 s duration, unchanged for 20 s: wait (its duration counts)", at(held("other", { leaseDurationSeconds: 60 }), 80_000, 100_000), "wait"],
  ["released (no holder): take it at once, one more transition", at(held(""), 99_999, 100_000), "update", { holderIdentity: "me", leaseTransitions: 4 }],
  ["held by me: renew, keeping acquireTime and transitions", at(held("me"), 99_000, 100_000), "update", { holderIdentity: "me", leaseTransitions: 3, acquireTime: 1_000, renewTime: 100_000 }],
  ["held by me, expired long ago: renew all the same", at(held("me"), 0, 100_000), "update", { leaseTransitions: 3 }],
];

test("leader decision: when a candidate takes, keeps or waits for a Lease (table)", () => {
  for (const [name, observation, kind, record] of rows) {
    const d = decide(observation, "me", 15_000);
    assert.equal(d.kind, kind, name);
    if (record && d.kind !== "wait") {
      for (const [field, value] of Object.entries(record)) {
        assert.equal(d.record[field as keyof LeaseRecord], value, `${name}: ${field}`);
      }
    }
    if (d.kind === "wait") assert.equal(d.holder, "other", name);
  }
});

test("lease records: times are RFC 3339 micro-times (six fractional digits, UTC), and read back", () => {
  assert.equal(microTime(Date.UTC(2026, 11, 6, 8, 10, 0, 123)), "2026-12-06T08:10:00.123000Z");
  const record = held("me", {
    acquireTime: Date.UTC(2026, 0, 1),
    renewTime: Date.UTC(2026, 0, 2, 3),
  });
  const spec = specOf(record);
  assert.match(spec.renewTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  assert.deepEqual(recordOf(spec), record);
  // a Lease without a spec, or with wrong fields, reads as empty: free to take
  assert.deepEqual(recordOf(undefined), {
    holderIdentity: "",
    leaseDurationSeconds: 0,
    acquireTime: 0,
    renewTime: 0,
    leaseTransitions: 0,
  });
  assert.equal(recordOf({ holderIdentity: 7, leaseTransitions: -1 }).leaseTransitions, 0);
});
