import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { Head } from "../../src/checkpoint/_head.ts";
import {
  atOrAfter,
  planSave,
  type SaveInput,
  type SavePlan,
  type SavePolicy,
  type StoredHead,
} from "../../src/checkpoint/_save_plan.ts";
import { IDENTITY } from "./_helpers.ts";

const POLICY: SavePolicy = { maxLogEntries: 4, maxLogRatio: 0.5, versionMarkerIntervalMs: 60_000 };
const NOW = 1_000_000;
const GEN = "0123456789abcdef";

/** A stored head at `rv`: a snapshot of `baseBytes` bytes at `baseRv`, `log` pieces of the given sizes. */
function stored(rv: string, o: {
  baseRv?: string;
  baseBytes?: number;
  log?: number[];
  ageMs?: number;
  partial?: { continue: string; resourceVersion: string };
  noBase?: boolean;
} = {}): StoredHead {
  const head: Head = {
    format: "kube-reflector-checkpoint",
    version: 2,
    savedAt: new Date(NOW - (o.ageMs ?? 0)).toISOString(),
    resourceVersion: o.noBase ? "" : rv,
    count: 0,
    identity: IDENTITY,
    ...(o.noBase ? {} : {
      base: { gen: GEN, resourceVersion: o.baseRv ?? rv, count: 0, bytes: o.baseBytes ?? 10_000 },
    }),
    log: (o.log ?? []).map((bytes) => ({ gen: GEN, from: rv, to: rv, count: 1, bytes })),
    ...(o.partial ? { partial: { pages: [GEN], count: 1, ...o.partial } } : {}),
  };
  return { kind: "head", head, savedAtMs: NOW - (o.ageMs ?? 0) };
}

const OTHER: StoredHead = { kind: "other" };
/** Changes since `since`: `count` of them, in a piece of `bytes` bytes. */
const changes = (since: string, count: number, bytes = 100 * count) => ({ since, count, bytes });
const input = (resourceVersion: string, more: Partial<SaveInput> = {}): SaveInput => ({
  resourceVersion,
  listed: false,
  ...more,
});

type Row = [
  name: string,
  stored: StoredHead,
  input: SaveInput,
  state: SavePlan["state"],
  partial?: SavePlan["partial"],
];

// deno-fmt-ignore
const rows: Row[] = [
  // nothing usable stored
  ["nothing stored (or a v1 checkpoint, or a damaged one): a snapshot", OTHER, input("10"), "base"],
  ["nothing stored, with changes: a snapshot", OTHER, input("10", { changes: changes("5", 2) }), "base"],
  ["a head with only a list in progress: a snapshot (the list, older, is moot)", stored("", { noBase: true, partial: { continue: "c", resourceVersion: "9" } }), input("10", { changes: changes("9", 1) }), "base", "clear"],
  ["a head with only a list in progress, newer than the objects: a snapshot, the list kept", stored("", { noBase: true, partial: { continue: "c", resourceVersion: "11" } }), input("10"), "base"],
  ["untrusted objects and no complete ones to replace them: dropped", stored("10"), input("", { replace: true, progress: { resourceVersion: "50" } }), "drop", "restart"],
  // a newer save, or this very one
  ["a newer head stored: nothing", stored("20"), input("15", { changes: changes("10", 3) }), "keep"],
  ["a newer head stored, even without changes: nothing", stored("20"), input("15"), "keep"],
  ["the stored version is this one: nothing", stored("15"), input("15", { changes: changes("10", 3) }), "keep"],
  ["the stored version is this one, no changes given: nothing", stored("15"), input("15"), "keep"],
  // changes that continue the stored version
  ["changes since the head's version: a log piece", stored("10"), input("12", { changes: changes("10", 3) }), "log"],
  ["changes since before the head's version (another run saved in between): a log piece", stored("11"), input("12", { changes: changes("10", 3) }), "log"],
  ["versions compare as integers, not as text", stored("9"), input("10", { changes: changes("9", 1) }), "log"],
  // no change
  ["no change, a young head: nothing", stored("10", { ageMs: 59_999 }), input("12", { changes: changes("10", 0) }), "keep"],
  ["no change, a head as old as the interval: the version only", stored("10", { ageMs: 60_000 }), input("12", { changes: changes("10", 0) }), "version"],
  ["no change, an old head: the version only", stored("10", { ageMs: 3_600_000 }), input("12", { changes: changes("10", 0) }), "version"],
  // compaction
  ["the log at maxLogEntries - 1 pieces: one more", stored("10", { log: [1, 1, 1] }), input("12", { changes: changes("10", 1) }), "log"],
  ["the log at maxLogEntries pieces: a new snapshot", stored("10", { log: [1, 1, 1, 1] }), input("12", { changes: changes("10", 1) }), "base"],
  ["the log at exactly maxLogRatio of the snapshot: one more", stored("10", { log: [4000] }), input("12", { changes: changes("10", 1, 1000) }), "log"],
  ["the log past maxLogRatio of the snapshot: a new snapshot", stored("10", { log: [4000] }), input("12", { changes: changes("10", 1, 1001) }), "base"],
  ["one change bigger than half the snapshot: a new snapshot", stored("10", { baseBytes: 1000 }), input("12", { changes: changes("10", 1, 501) }), "base"],
  // changes that do not continue the stored version
  ["no changes given: a new snapshot", stored("10"), input("12"), "base"],
  ["changes since after the head's version (a gap): a new snapshot", stored("10"), input("14", { changes: changes("12", 1) }), "base"],
  ["no changes since after the head's version: a new snapshot, not a marker", stored("10", { ageMs: 3_600_000 }), input("14", { changes: changes("12", 0) }), "base"],
  // versions that are not integers: only equality is known
  ["non-integer: the same version: nothing", stored("abc"), input("abc", { changes: changes("abc", 1) }), "keep"],
  ["non-integer: another version: a new snapshot (the order is unknown)", stored("abc"), input("abd", { changes: changes("abc", 1) }), "base"],
  ["non-integer head after an integer: a new snapshot, never taken as newer", stored("abc"), input("12", { changes: changes("10", 1) }), "base"],
  ["a version beyond 2^53 compares exactly", stored("9007199254740993"), input("9007199254740994", { changes: changes("9007199254740993", 1) }), "log"],
  ["a version beyond 2^53 that is older: nothing", stored("9007199254740994"), input("9007199254740993"), "keep"],
  // a first list in progress: nothing complete to write
  ["no complete objects: the state is kept", OTHER, input("", { progress: { resourceVersion: "50" } }), "keep", "restart"],
];

test("planSave decides what a save writes (table)", () => {
  for (const [name, s, i, state, partial = "keep"] of rows) {
    const plan = planSave(s, i, POLICY, NOW);
    assert.deepEqual({ state: plan.state, partial: plan.partial }, { state, partial }, name);
    assert.equal(typeof plan.why, "string", name);
    assert.notEqual(plan.why, "", name);
  }
});

type PartialRow = [
  name: string,
  stored: StoredHead,
  input: SaveInput,
  partial: SavePlan["partial"],
];
const listAt50 = { continue: "c2", resourceVersion: "50" };
// deno-fmt-ignore
const partialRows: PartialRow[] = [
  ["a first page: the list restarts", OTHER, input("", { progress: { resourceVersion: "50" } }), "restart"],
  ["a first page over a stored list: the list restarts", stored("10", { partial: listAt50 }), input("10", { progress: { resourceVersion: "60" } }), "restart"],
  ["pages from the stored continue token of the same list: appended", stored("10", { partial: listAt50 }), input("10", { progress: { since: "c2", resourceVersion: "50" } }), "append"],
  ["pages from another continue token (another run went on): dropped", stored("10", { partial: listAt50 }), input("10", { progress: { since: "c1", resourceVersion: "50" } }), "keep"],
  ["pages of another list with the same token: dropped", stored("10", { partial: listAt50 }), input("10", { progress: { since: "c2", resourceVersion: "51" } }), "keep"],
  ["pages to append but no list stored (it completed meanwhile): dropped", stored("10"), input("10", { progress: { since: "c2", resourceVersion: "50" } }), "keep"],
  ["a list completed: a stored list in progress is cleared", stored("10", { partial: listAt50 }), input("10", { listed: true }), "clear"],
  ["complete objects written past a stored list's version: the list is moot", stored("10", { partial: listAt50 }), input("60", { changes: changes("10", 1) }), "clear"],
  ["complete objects written below a stored list's version: the list is kept", stored("10", { partial: listAt50 }), input("40", { changes: changes("10", 1) }), "keep"],
  ["a list completed, none stored: nothing to clear", stored("10"), input("10", { listed: true }), "keep"],
  ["no list this run: a stored one is kept", stored("10", { partial: listAt50 }), input("10"), "keep"],
  ["a newer head: the pages are not written either", stored("20", { partial: listAt50 }), input("15", { progress: { since: "c2", resourceVersion: "50" } }), "keep"],
];

test("planSave decides what happens to a list in progress (table)", () => {
  for (const [name, s, i, partial] of partialRows) {
    assert.equal(planSave(s, i, POLICY, NOW).partial, partial, name);
  }
});

test("planSave writes the progress of a list and the changes of the same run together", () => {
  const plan = planSave(
    stored("10", { partial: listAt50 }),
    input("12", { changes: changes("10", 2), progress: { since: "c2", resourceVersion: "50" } }),
    POLICY,
    NOW,
  );
  assert.deepEqual({ state: plan.state, partial: plan.partial }, {
    state: "log",
    partial: "append",
  });
});

test("planSave follows the policy it is given", () => {
  const s = stored("10", { log: [1, 1, 1, 1], ageMs: 1000 });
  const one = input("12", { changes: changes("10", 1) });
  assert.equal(planSave(s, one, { ...POLICY, maxLogEntries: 5 }, NOW).state, "log");
  assert.equal(planSave(s, one, { ...POLICY, maxLogEntries: 4 }, NOW).state, "base");
  assert.equal(
    planSave(s, one, { ...POLICY, maxLogEntries: 5, maxLogRatio: 0.0001 }, NOW).state,
    "base",
  );
  const none = input("12", { changes: changes("10", 0) });
  assert.equal(planSave(s, none, { ...POLICY, versionMarkerIntervalMs: 0 }, NOW).state, "version");
  assert.equal(planSave(s, none, { ...POLICY, versionMarkerIntervalMs: 1001 }, NOW).state, "keep");
  // the age is measured with the time given, never the wall clock
  assert.equal(planSave(s, none, POLICY, NOW + 59_000).state, "version");
});

test("atOrAfter compares integer versions as integers and others only for equality", () => {
  const cases: [string, string, boolean][] = [
    ["10", "9", true],
    ["9", "10", false],
    ["10", "10", true],
    ["010", "10", true],
    ["9007199254740993", "9007199254740992", true],
    ["9007199254740992", "9007199254740993", false],
    ["abc", "abc", true],
    ["abc", "abd", false],
    ["10", "abc", false],
    ["abc", "10", false],
    ["-1", "-1", true],
    ["1.5", "1", false],
  ];
  for (const [a, b, expected] of cases) assert.equal(atOrAfter(a, b), expected, `${a} >= ${b}`);
});
