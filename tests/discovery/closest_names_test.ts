import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { closestNames, editDistance } from "../../src/discovery/_closest_names.ts";

const NAMES = [
  "pods",
  "pod",
  "po",
  "deployments",
  "deployment",
  "deploy",
  "configmaps",
  "configmap",
  "cm",
  "namespaces",
  "ns",
  "nodes",
  "no",
];

test("editDistance counts insertions, deletions, substitutions and swaps of neighbours", () => {
  const rows: Array<[string, string, number]> = [
    ["", "", 0],
    ["", "abc", 3],
    ["abc", "", 3],
    ["pods", "pods", 0],
    ["deplyo", "deploy", 1], // a swap
    ["pdos", "pods", 1],
    ["pod", "pods", 1],
    ["configmap", "configmaps", 1],
    ["kitten", "sitting", 3],
    ["ca", "abc", 3], // optimal string alignment: no edit of a swapped pair
  ];
  for (const [a, b, want] of rows) assert.equal(editDistance(a, b), want, `${a} -> ${b}`);
});

test("closestNames: close by edits or by prefix, best first, ties in the given order", () => {
  const rows: Array<[string, string[]]> = [
    ["deplyo", ["deploy"]], // 1 edit; "deployment" is 5
    ["depl", ["deployments", "deployment", "deploy"]], // too many edits, but it begins them
    ["pdos", ["pods"]], // a swap; "pod" is 2 edits (limit: 1 edit per 3 typed, at least 1)
    ["configmpas", ["configmaps", "configmap"]],
    ["ConfigMpas", ["configmaps", "configmap"]], // any case
    ["nodess", ["nodes"]], // 1 edit
    ["xyzzy", []],
    ["", []],
    ["pods", ["pod"]], // an exact name is not a suggestion of itself
    ["po", ["pod", "no"]], // 1 edit; "pods" is 2, and 2 typed are too few for a prefix
  ];
  for (const [input, want] of rows) {
    assert.deepEqual(closestNames(input, NAMES), want, input);
  }
});

test("closestNames: at most `limit`, each name once", () => {
  assert.deepEqual(closestNames("po", ["pod", "pod", "po", "pv", "no"], 2), ["pod", "pv"]);
  assert.deepEqual(closestNames("pos", ["Pods", "pods"]), ["Pods"]);
});
