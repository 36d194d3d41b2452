/** The decision of `finalizer` and its patches, as a table; the finalizer name check. */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  type FinalizerMeta,
  type FinalizerStep,
  finalizerStep,
  isQualifiedName,
} from "../../src/controller/_finalizer_step.ts";

const F = "example.com/cleanup";
const AT = "2026-01-01T00:00:00Z";

// deno-fmt-ignore
const rows: [string, FinalizerMeta, FinalizerStep][] = [
  ["no finalizers: create the array, guarded by the resourceVersion", { resourceVersion: "7" },
    { kind: "add", patch: [{ op: "test", path: "/metadata/resourceVersion", value: "7" }, { op: "add", path: "/metadata/finalizers", value: [F] }] }],
  ["an empty array: create it all the same", { resourceVersion: "7", finalizers: [] },
    { kind: "add", patch: [{ op: "test", path: "/metadata/resourceVersion", value: "7" }, { op: "add", path: "/metadata/finalizers", value: [F] }] }],
  ["others' finalizers: append ours", { resourceVersion: "8", finalizers: ["other.io/x"] },
    { kind: "add", patch: [{ op: "test", path: "/metadata/resourceVersion", value: "8" }, { op: "add", path: "/metadata/finalizers/-", value: F }] }],
  ["ours present, not deleting: apply", { resourceVersion: "9", finalizers: ["other.io/x", F] }, { kind: "apply" }],
  ["deleting with ours: cleanup, then remove it at its index, guarded by the whole array", { deletionTimestamp: AT, finalizers: ["other.io/x", F, "z.io/z"] },
    { kind: "cleanup", removal: [{ op: "test", path: "/metadata/finalizers", value: ["other.io/x", F, "z.io/z"] }, { op: "remove", path: "/metadata/finalizers/1" }] }],
  ["deleting without ours: nothing (never re-add)", { deletionTimestamp: AT, finalizers: ["other.io/x"] }, { kind: "none" }],
  ["deleting, no finalizers at all: nothing", { deletionTimestamp: AT }, { kind: "none" }],
  ["a null deletionTimestamp is no deletion", { resourceVersion: "3", deletionTimestamp: null, finalizers: [F] }, { kind: "apply" }],
  ["a Date deletionTimestamp (client-node's types) is a deletion", { deletionTimestamp: new Date(0), finalizers: [F] },
    { kind: "cleanup", removal: [{ op: "test", path: "/metadata/finalizers", value: [F] }, { op: "remove", path: "/metadata/finalizers/0" }] }],
];

test("finalizerStep: add with a resourceVersion test, apply, cleanup with a guarded removal, or nothing", () => {
  for (const [name, meta, expected] of rows) {
    assert.deepEqual(finalizerStep(meta, F), expected, name);
  }
});

test("finalizerStep: an add needs the object's resourceVersion", () => {
  assert.throws(() => finalizerStep({}, F), TypeError);
  assert.throws(() => finalizerStep({ resourceVersion: "" }, F), TypeError);
  // apply, cleanup and nothing need none
  assert.equal(finalizerStep({ finalizers: [F] }, F).kind, "apply");
  assert.equal(finalizerStep({ deletionTimestamp: AT }, F).kind, "none");
});

test("finalizerStep: the removal patch is a copy (a later change of the object does not alter it)", () => {
  const finalizers = [F];
  const step = finalizerStep({ deletionTimestamp: AT, finalizers }, F);
  finalizers.push("late.io/x");
  assert.deepEqual(step.kind === "cleanup" && step.removal[0].value, [F]);
});

test("isQualifiedName takes what the API server takes as a finalizer", () => {
  // deno-fmt-ignore
  const rows: [string, boolean][] = [
    ["example.com/cleanup", true], ["cleanup", true], ["kubernetes", true], ["a", true],
    ["my.domain.io/Has_Under.score-1", true], [`${"a".repeat(253)}/x`, true], [`x/${"b".repeat(63)}`, true],
    ["", false], ["/x", false], ["example.com/", false], ["a/b/c", false], ["Example.com/x", false],
    ["example.com/-x", false], ["example.com/x-", false], ["exa mple.com/x", false], ["example..com/x", false],
    [`${"a".repeat(254)}/x`, false], [`x/${"b".repeat(64)}`, false], ["example.com/clean up", false],
  ];
  for (const [value, ok] of rows) assert.equal(isQualifiedName(value), ok, JSON.stringify(value));
});
