import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  type FailureKind,
  initialState,
  type MachineState,
  next,
  type Outcome,
  type Phase,
} from "../../src/reflector/_watch_machine.ts";

const limits = { shortWatchMs: 1_000, streamingListAttempts: 3 };
const S = (phase: Phase, streaming = false): MachineState => ({ phase, streaming });
const list = (rv: string): Phase => ({ kind: "list", rv });
const stream = (rv: string, listRv = rv, failures = 0): Phase => ({
  kind: "stream",
  rv,
  listRv,
  failures,
});
const watch = (rv: string, waited = false): Phase => ({ kind: "watch", rv, waited });
const fail = (failure: FailureKind, rv = "7", durationMs = 5_000, events = 0): Outcome => ({
  kind: "failed",
  failure,
  rv,
  events,
  durationMs,
});
const synced = (o: Outcome): Outcome => ({ ...o, synced: true } as Outcome);
const ended = (rv: string, events: number, durationMs: number): Outcome => ({
  kind: "ended",
  rv,
  events,
  durationMs,
});

/** [name, state, outcome, next state, wait, relist reason] */
const rows: Array<[string, MachineState, Outcome, MachineState, string, string | undefined]> = [
  // lists
  [
    "a list completes: watch from its version",
    S(list("0")),
    { kind: "listed", rv: "5" },
    S(watch("5")),
    "none",
    undefined,
  ],
  [
    "a list at a version is gone: consistent list at once",
    S(list("5")),
    fail("expired"),
    S(list("")),
    "none",
    "expired",
  ],
  [
    'a list at "0" is gone: consistent list at once',
    S(list("0")),
    fail("expired"),
    S(list("")),
    "none",
    "expired",
  ],
  [
    "a consistent list is gone: retry after the backoff",
    S(list("")),
    fail("expired"),
    S(list("")),
    "backoff",
    "expired",
  ],
  [
    "a list gets no answer: same list after the backoff (client-go)",
    S(list("5")),
    fail("no-answer"),
    S(list("5")),
    "backoff",
    "list-failed",
  ],
  [
    "a list answered 5xx: same list after the backoff",
    S(list("5")),
    fail("answered"),
    S(list("5")),
    "backoff",
    "list-failed",
  ],
  [
    "a malformed list: same list after the backoff",
    S(list("0")),
    fail("bad-data"),
    S(list("0")),
    "backoff",
    "list-failed",
  ],
  [
    "a bug while listing: same list after the backoff",
    S(list("0")),
    fail("bug"),
    S(list("0")),
    "backoff",
    "list-failed",
  ],
  // watches
  [
    "a watch closes cleanly: rewatch from its last version at once",
    S(watch("5")),
    ended("9", 3, 300_000),
    S(watch("9")),
    "none",
    undefined,
  ],
  [
    "a quiet watch closes at its timeout: rewatch at once",
    S(watch("5")),
    ended("5", 0, 300_000),
    S(watch("5")),
    "none",
    undefined,
  ],
  [
    "a short watch: rewatch after the backoff",
    S(watch("5")),
    ended("5", 0, 10),
    S(watch("5", true)),
    "backoff",
    undefined,
  ],
  [
    "a watch that closes at once after an event: rewatch after the backoff too",
    S(watch("5")),
    ended("9", 1, 10),
    S(watch("9", true)),
    "backoff",
    undefined,
  ],
  [
    "a watch with no answer: rewatch after the reconnect backoff",
    S(watch("5")),
    fail("no-answer", "8"),
    S(watch("8", true)),
    "reconnect",
    undefined,
  ],
  [
    "a watch answered 429/5xx: rewatch after the backoff",
    S(watch("5")),
    fail("answered", "5", 3),
    S(watch("5", true)),
    "backoff",
    undefined,
  ],
  [
    "a watch answered 410 after a while: relist at once",
    S(watch("5")),
    fail("expired", "9", 60_000, 4),
    S(list("9")),
    "none",
    "expired",
  ],
  [
    "a watch started after a wait answered 410 at once (after an outage): relist at once, no second wait",
    S(watch("5", true)),
    fail("expired", "5", 3),
    S(list("5")),
    "none",
    "expired",
  ],
  [
    "a watch started without a wait answered 410 at once: relist after the backoff",
    S(watch("5")),
    fail("expired", "5", 3),
    S(list("5")),
    "backoff",
    "expired",
  ],
  [
    "a watch that delivered events then 410 at once, without a wait before it: relist after the backoff",
    S(watch("5")),
    fail("expired", "7", 3, 2),
    S(list("7")),
    "backoff",
    "expired",
  ],
  [
    "a poison event: relist from the last applied version after the backoff",
    S(watch("5")),
    fail("bad-data", "6", 20, 1),
    S(list("6")),
    "backoff",
    "watch-failed",
  ],
  [
    "a bug while watching: relist after the backoff",
    S(watch("5")),
    fail("bug", "5"),
    S(list("5")),
    "backoff",
    "watch-failed",
  ],
  [
    "streaming on: a relist is a streaming list",
    S(watch("5"), true),
    fail("bad-data", "6"),
    S(stream("6"), true),
    "backoff",
    "watch-failed",
  ],
  // streaming lists
  [
    "a streaming list that synced and then closed cleanly: judged as a watch (rewatch at once)",
    S(stream(""), true),
    synced(ended("12", 3, 60_000)),
    S(watch("12"), true),
    "none",
    undefined,
  ],
  [
    "a streaming list that synced and then lost its connection: rewatch after the reconnect backoff, no relist",
    S(stream(""), true),
    synced(fail("no-answer", "14", 60_000, 4)),
    S(watch("14", true), true),
    "reconnect",
    undefined,
  ],
  [
    "a streaming list that synced and then got a 410: relist from the last applied version",
    S(stream(""), true),
    synced(fail("expired", "14", 60_000, 4)),
    S(stream("14"), true),
    "none",
    "expired",
  ],
  [
    "a streaming list refused for another reason (403 without watch, 404): one plain LIST at once, streaming kept",
    S(stream("6", "6"), true),
    fail("refused"),
    S(list("6"), true),
    "none",
    "list-failed",
  ],
  [
    "a watch refused for good (403: list but no watch): relist after the backoff, never rewatch",
    S(watch("5")),
    fail("refused", "7"),
    S(list("7")),
    "backoff",
    "watch-failed",
  ],
  [
    "a watch refused for good with streaming on: relist as a streaming list after the backoff",
    S(watch("5"), true),
    fail("refused", "7", 60_000, 3),
    S(stream("7"), true),
    "backoff",
    "watch-failed",
  ],
  [
    "a list refused (404: no such resource): the same list after the backoff",
    S(list("0")),
    fail("refused", "0"),
    S(list("0")),
    "backoff",
    "list-failed",
  ],
  [
    "a server without streaming lists: LIST for good",
    S(stream("", "0"), true),
    fail("unsupported"),
    S(list("0"), false),
    "none",
    "streaming-fallback",
  ],
  [
    "a streaming list from a version gone: consistent streaming list at once",
    S(stream("5"), true),
    fail("expired"),
    S(stream("", ""), true),
    "none",
    "expired",
  ],
  [
    "a streaming list ends without its bookmark: retry after the backoff",
    S(stream("", "0"), true),
    ended("", 10, 2_000),
    S(stream("", "0", 1), true),
    "backoff",
    "list-failed",
  ],
  [
    "a streaming list fails mid-stream: retry after the backoff",
    S(stream("", "0", 1), true),
    fail("no-answer"),
    S(stream("", "0", 2), true),
    "backoff",
    "list-failed",
  ],
  [
    "a third streaming failure in a row: one paginated LIST",
    S(stream("", "0", 2), true),
    fail("answered"),
    S(list("0"), true),
    "backoff",
    "streaming-fallback",
  ],
];

for (const [name, state, outcome, want, wait, reason] of rows) {
  test(`watch machine: ${name}`, () => {
    const t = next(state, outcome, limits);
    assert.deepEqual(t.state, want);
    assert.equal(t.wait, wait);
    assert.equal(t.relist, reason);
  });
}

test('watch machine: the first phase lists at "0", or from a known version; streams when asked', () => {
  assert.deepEqual(initialState("", false), S(list("0")));
  assert.deepEqual(initialState("42", false), S(list("42")));
  assert.deepEqual(initialState("", true), S(stream("", "0"), true));
  assert.deepEqual(initialState("42", true), S(stream("42", "42"), true));
});

test("watch machine: resuming from a checkpoint's version starts with a watch from it, whose 410 relists at once from that version", () => {
  const resume = initialState("", true, "42");
  assert.deepEqual(resume, S(watch("42", true), true));
  assert.deepEqual(initialState("7", false, "42"), S(watch("42", true)), "the resume version wins");
  const t = next(
    S(watch("42", true)),
    { kind: "failed", failure: "expired", rv: "42", events: 0, durationMs: 3 },
    limits,
  );
  assert.deepEqual(t.state, S(list("42")));
  assert.equal(t.wait, "none", "no wait: nothing came before the resumed watch");
  assert.equal(t.relist, "expired");
});

test("watch machine: an outcome that cannot follow its phase relists after the backoff", () => {
  const t = next(S(watch("5")), { kind: "listed", rv: "9" }, limits);
  assert.deepEqual(t.state, S(list("5")));
  assert.equal(t.wait, "backoff");
});

test("watch machine: every (phase, outcome) pair has a rule that makes progress or waits", () => {
  const phases: Phase[] = [
    list("0"),
    list(""),
    list("5"),
    stream(""),
    stream("5", "5", 2),
    watch("5", true),
    watch("5"),
  ];
  const kinds: FailureKind[] = [
    "expired",
    "unsupported",
    "no-answer",
    "answered",
    "refused",
    "bad-data",
    "bug",
  ];
  const outcomes: Outcome[] = [
    { kind: "listed", rv: "9" },
    synced(ended("9", 1, 10)),
    ended("9", 0, 1),
    ended("9", 2, 60_000),
    ...kinds.flatMap((k) => [fail(k, "9", 1), fail(k, "9", 60_000, 5)]),
  ];
  for (const streaming of [false, true]) {
    for (const phase of phases) {
      for (const outcome of outcomes) {
        const t = next(S(phase, streaming), outcome, limits);
        assert.ok(["none", "reconnect", "backoff"].includes(t.wait));
        // A failure or an empty short watch never leads straight back to the same request
        // without a wait, unless the next request differs (a consistent read, a relist, a fallback).
        const same = JSON.stringify(t.state.phase) === JSON.stringify(phase);
        const failedNow = outcome.kind === "failed" ||
          (outcome.kind === "ended" && outcome.events === 0 && outcome.durationMs < 1_000);
        if (failedNow && same) {
          assert.notEqual(t.wait, "none", `${JSON.stringify([phase, outcome])}`);
        }
      }
    }
  }
});
