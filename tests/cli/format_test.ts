import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { ageOf, humanDuration } from "../../src/cli/_age.ts";
import { parseDuration } from "../../src/cli/_duration.ts";
import { parseFlags } from "../../src/cli/_flags.ts";
import { nameLine } from "../../src/cli/_output.ts";
import { AlignedText, formatCell, serverColumns } from "../../src/cli/_table.ts";
import { UsageError } from "../../src/cli/_usage_error.ts";

const S = 1000, M = 60 * S, H = 60 * M, D = 24 * H;

test("humanDuration writes ages as kubectl does", () => {
  const table: [number, string][] = [
    [-3 * S, "<invalid>"],
    [-1 * S, "0s"],
    [0, "0s"],
    [45 * S, "45s"],
    [119 * S, "119s"],
    [2 * M, "2m"],
    [5 * M + 30 * S, "5m30s"],
    [9 * M + 59 * S, "9m59s"],
    [10 * M + 30 * S, "10m"],
    [179 * M, "179m"],
    [3 * H, "3h"],
    [3 * H + 20 * M, "3h20m"],
    [8 * H + 20 * M, "8h"],
    [47 * H, "47h"],
    [2 * D, "2d"],
    [3 * D + 4 * H, "3d4h"],
    [12 * D + 5 * H, "12d"],
    [729 * D, "729d"],
    [730 * D, "2y"],
    [795 * D, "2y65d"],
    [9 * 365 * D, "9y"],
  ];
  for (const [ms, text] of table) assert.equal(humanDuration(ms), text, `${ms} ms`);
  assert.equal(ageOf(undefined, 0), "<unknown>");
  assert.equal(ageOf("2026-01-01T00:00:00Z", Date.parse("2026-01-01T00:05:00Z")), "5m");
});

test("parseDuration reads Go's common durations", () => {
  const table: [string, number | undefined][] = [
    ["30s", 30_000],
    ["2m", 120_000],
    ["1m30s", 90_000],
    ["1500ms", 1500],
    ["1h", 3_600_000],
    ["1.5s", 1500],
    ["30", undefined],
    ["", undefined],
    ["soon", undefined],
    ["-1s", undefined],
  ];
  for (const [text, ms] of table) assert.equal(parseDuration(text), ms, text);
});

test("parseFlags takes kubectl's forms, the last value of a repeated flag, and -- ", () => {
  const specs = [
    { name: "namespace", short: "n", switch: false },
    { name: "all-namespaces", short: "A", switch: true },
    { name: "output", short: "o", switch: false },
  ];
  const table: [string[], Record<string, string>, string[]][] = [
    [["pods", "-n", "a"], { namespace: "a" }, ["pods"]],
    [["-nkube-system", "pods"], { namespace: "kube-system" }, ["pods"]],
    [["-n=x", "--namespace=y"], { namespace: "y" }, []],
    [["--namespace", "z", "-A"], { namespace: "z", "all-namespaces": "true" }, []],
    [["-A=false", "-ojson"], { "all-namespaces": "false", output: "json" }, []],
    [["pods", "--", "-n", "x"], {}, ["pods", "-n", "x"]],
    [["-"], {}, ["-"]],
  ];
  for (const [args, values, positionals] of table) {
    const parsed = parseFlags(args, specs, "get");
    assert.deepEqual(Object.fromEntries(parsed.values), values, args.join(" "));
    assert.deepEqual(parsed.positionals, positionals, args.join(" "));
  }
  for (const args of [["--nope"], ["-z"], ["-n"], ["--output"], ["-A=yes"]]) {
    assert.throws(() => parseFlags(args, specs, "get"), UsageError, args.join(" "));
  }
});

test("AlignedText pads every column but the last to its widest cell + 3, at least 6", () => {
  const text = new AlignedText();
  assert.equal(
    text.render([["NAME", "READY", "AGE"], ["a", "1/1", "5m"], ["a-longer-name", "0/1", "10d"]]),
    "NAME            READY   AGE\n" +
      "a               1/1     5m\n" +
      "a-longer-name   0/1     10d\n",
  );
  // widths only grow: a later row fits what was printed before
  assert.equal(text.render([["b", "1/1", "1s"]]), "b               1/1     1s\n");
});

test("server columns: priority 0 unless wide, upper-case headers, <none> for null, a NAMESPACE first", () => {
  const defs = [
    { name: "Name", type: "string", format: "name", priority: 0 },
    { name: "Ready", type: "string", priority: 0 },
    { name: "Nominated Node", type: "string", priority: 1 },
  ];
  const object = { metadata: { name: "p", namespace: "ns" } };
  const row = { cells: ["p", "1/1", null] };
  const narrow = serverColumns(defs, { wide: false, namespaceColumn: false, now: () => 0 });
  assert.deepEqual(narrow.headers, ["NAME", "READY"]);
  assert.deepEqual(narrow.cells(object, row), ["p", "1/1"]);
  const wide = serverColumns(defs, { wide: true, namespaceColumn: true, now: () => 0 });
  assert.deepEqual(wide.headers, ["NAMESPACE", "NAME", "READY", "NOMINATED NODE"]);
  assert.deepEqual(wide.cells(object, row), ["ns", "p", "1/1", "<none>"]);
  assert.deepEqual([formatCell(3), formatCell(true), formatCell({ a: 1 })], [
    "3",
    "true",
    '{"a":1}',
  ]);
});

test("-o name is kind.group/name as kubectl writes it", () => {
  const o = { metadata: { name: "web" } };
  assert.equal(nameLine({ kind: "Deployment", group: "apps" }, o), "deployment.apps/web\n");
  assert.equal(nameLine({ kind: "ConfigMap", group: "" }, o), "configmap/web\n");
  assert.equal(
    nameLine({ kind: "CronTab", group: "stable.example.com" }, o),
    "crontab.stable.example.com/web\n",
  );
});
