/**
 * The demo's pure parts: flags and durations, the churn's choice, the
 * seeded random numbers, the store = server comparison and the words.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { DEMO_DEFAULTS, demoDuration, parseDemoArgs } from "../../src/cli/_demo_options.ts";
import { chooseOp, demoNamespaces } from "../../src/cli/_demo_churn.ts";
import { randomInt, seededRandom } from "../../src/cli/_demo_random.ts";
import { compareStore, describeDifferences } from "../../src/cli/_demo_compare.ts";
import { formatDuration, plainLine, statusLine, tally } from "../../src/cli/_demo_report.ts";

test("demoDuration reads ms, s, m, h, compounds and bare seconds; anything else is undefined", () => {
  const rows: [string, number | undefined][] = [
    ["30s", 30_000],
    ["1.5s", 1_500],
    ["500ms", 500],
    ["2m", 120_000],
    ["1h", 3_600_000],
    ["1m30s", 90_000],
    ["20", 20_000],
    ["0", 0],
    ["0.25", 250],
    ["", undefined],
    ["soon", undefined],
    ["-1s", undefined],
    ["1d", undefined],
    ["s", undefined],
    ["1.s", undefined],
  ];
  for (const [text, ms] of rows) assert.equal(demoDuration(text), ms, text);
});

test("parseDemoArgs: defaults, the duration by terminal, flags in both spellings", () => {
  const seed = () => 42;
  assert.deepEqual(parseDemoArgs([], { terminal: false, randomSeed: seed }), {
    objects: DEMO_DEFAULTS.objects,
    namespaces: DEMO_DEFAULTS.namespaces,
    rate: DEMO_DEFAULTS.rate,
    durationMs: DEMO_DEFAULTS.nonTerminalDurationMs,
    seed: 42,
    faultEveryMs: DEMO_DEFAULTS.faultEveryMs,
  });
  assert.equal(
    parseDemoArgs([], { terminal: true, randomSeed: seed }) !== "help" &&
      (parseDemoArgs([], { terminal: true, randomSeed: seed }) as { durationMs?: number })
        .durationMs,
    undefined,
  );
  assert.deepEqual(
    parseDemoArgs(
      [
        "--objects=10",
        "--namespaces",
        "2",
        "--rate=0",
        "--duration",
        "2m",
        "--seed=0",
        "--fault-every",
        "0",
      ],
      { terminal: true, randomSeed: seed },
    ),
    { objects: 10, namespaces: 2, rate: 0, durationMs: 120_000, seed: 0, faultEveryMs: 0 },
  );
  assert.equal(parseDemoArgs(["--help"], { terminal: false, randomSeed: seed }), "help");
});

test("chooseOp: creates when empty, mostly updates, and drifts back to the target", () => {
  assert.equal(chooseOp(0.99, 0, 100), "create");
  assert.equal(chooseOp(0.9, 100, 100), "update");
  assert.equal(chooseOp(0.1, 100, 100), "create");
  assert.equal(chooseOp(0.3, 100, 100), "delete");
  // Far below the target: creates win where deletes would be; far above: creates fall to 5 %.
  assert.equal(chooseOp(0.4, 10, 100), "create");
  assert.equal(chooseOp(0.04, 200, 100), "create");
  assert.equal(chooseOp(0.06, 200, 100), "delete");
  // A target of 0 (--objects 0): deletes once anything exists.
  assert.equal(chooseOp(0.1, 3, 0), "delete");
  let count = 100;
  const random = seededRandom(1);
  for (let i = 0; i < 10_000; i++) {
    const op = chooseOp(random(), count, 100);
    if (op === "create") count++;
    else if (op === "delete") count--;
  }
  assert.ok(count > 80 && count < 120, `count drifted to ${count}`);
  assert.deepEqual(demoNamespaces(3), ["demo-0", "demo-1", "demo-2"]);
});

test("seededRandom: the same seed, the same numbers, all in [0, 1)", () => {
  const a = seededRandom(7);
  const b = seededRandom(7);
  const c = seededRandom(8);
  const xs = Array.from({ length: 1000 }, () => a());
  assert.deepEqual(xs, Array.from({ length: 1000 }, () => b()));
  assert.notDeepEqual(xs.slice(0, 10), Array.from({ length: 10 }, () => c()));
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.ok(xs.every((x) => {
    const n = randomInt(() => x, 5);
    return Number.isInteger(n) && n >= 0 && n < 5;
  }));
  assert.equal(randomInt(() => 0.9999999999, 3), 2);
});

const cm = (key: string, rv: string) => {
  const [namespace, name] = key.split("/");
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { namespace, name, resourceVersion: rv },
  };
};

test("compareStore: equal, missing, extra and stale objects, sorted by key; the words name the first few", () => {
  const server = [cm("a/1", "10"), cm("a/2", "11"), cm("b/1", "12")];
  assert.deepEqual(compareStore([...server].reverse(), server), {
    equal: true,
    storeCount: 3,
    serverCount: 3,
    differences: [],
  });
  const c = compareStore([cm("a/1", "10"), cm("a/2", "9"), cm("c/9", "3")], server);
  assert.equal(c.equal, false);
  assert.deepEqual(c.differences, [
    { key: "a/2", kind: "stale", store: "9", server: "11" },
    { key: "b/1", kind: "missing", server: "12" },
    { key: "c/9", kind: "extra", store: "3" },
  ]);
  assert.deepEqual(describeDifferences(c, 2), [
    "store != server: 3 objects in the store, 3 on the server; 1 missing, 1 extra, 1 at another resourceVersion",
    "  stale   a/2 (store at 9, server at 11)",
    "  missing b/1 (server at 12)",
    "  ... and 1 more",
  ]);
  assert.equal(compareStore([], []).equal, true);
});

test("the status line, the plain line, durations and tallies", () => {
  const s = {
    elapsedMs: 12_345,
    objects: 3012,
    eventsPerSecond: 182.6,
    relists: 4,
    reconnects: 9,
    resourceVersion: "51234",
    sinceLastEventMs: 120,
    faults: 7,
  };
  assert.equal(
    statusLine(s, 120),
    "12.3s · 3012 objects · 183 events/s · rv 51234 · last event 0.1s ago · relists 4 · reconnects 9 · faults 7",
  );
  // Narrower than the full words: the compact form; narrower still: cut, never wrapped.
  assert.equal(
    statusLine(s),
    "12.3s 3012 obj 183 ev/s rv 51234 (0.1s ago) relists 4 reconn 9 faults 7",
  );
  assert.equal(statusLine({ ...s, sinceLastEventMs: undefined }, 80).includes("(- ago)"), true);
  assert.equal(statusLine(s, 21), "12.3s 3012 obj 183 e");
  assert.equal(statusLine(s, 0), "1");
  assert.equal(
    plainLine({ ...s, sinceLastEventMs: undefined, resourceVersion: "" }),
    "[12.3s] objects=3012 events/s=183 relists=4 reconnects=9 rv=- last-event=none faults=7\n",
  );
  const rows: [number, string][] = [[0, "0.0s"], [400, "0.4s"], [59_940, "59.9s"], [
    125_000,
    "2m05s",
  ], [
    3_720_000,
    "1h02m",
  ], [-5, "0.0s"]];
  for (const [ms, text] of rows) assert.equal(formatDuration(ms), text);
  assert.equal(
    tally([["initial", 1], ["expired", 2], ["list-failed", 0]]),
    "3: initial 1, expired 2",
  );
  assert.equal(tally([]), "0");
  assert.equal(tally([["x", 0]]), "0");
});
