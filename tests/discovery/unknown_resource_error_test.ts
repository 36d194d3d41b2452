import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { type DiscoveryFailure, UnknownResourceError } from "../../mod.ts";

const failure = (groupVersion: string, message: string): DiscoveryFailure => ({
  groupVersion,
  error: new Error(message),
});

test("UnknownResourceError's message: kubectl's, with suggestions, and the group versions discovery failed for", () => {
  const down = failure("coordination.k8s.io/v1", "service unavailable");
  const rows: Array<[string, string[], DiscoveryFailure[], string]> = [
    ["deplyo", [], [], 'the server doesn\'t have a resource type "deplyo"'],
    [
      "deplyo",
      ["deploy", "deployments"],
      [],
      'the server doesn\'t have a resource type "deplyo" (did you mean deploy, deployments?)',
    ],
    [
      "leases",
      [],
      [down],
      'the server doesn\'t have a resource type "leases" (discovery failed for coordination.k8s.io/v1: service unavailable)',
    ],
    [
      "leasez",
      ["leases"],
      [down, failure("metrics.k8s.io/v1beta1", "metrics.k8s.io/v1beta1 is stale")],
      'the server doesn\'t have a resource type "leasez" (did you mean leases?) (discovery failed for coordination.k8s.io/v1: service unavailable; metrics.k8s.io/v1beta1: metrics.k8s.io/v1beta1 is stale)',
    ],
    [
      "x",
      [],
      ["a/v1", "b/v1", "c/v1", "d/v1", "e/v1"].map((gv) => failure(gv, "down")),
      'the server doesn\'t have a resource type "x" (discovery failed for a/v1: down; b/v1: down; c/v1: down and 2 more)',
    ],
  ];
  for (const [input, suggestions, failed, message] of rows) {
    const err = new UnknownResourceError(input, suggestions, failed);
    assert.equal(err.message, message);
    assert.equal(err.input, input);
    assert.deepEqual(err.suggestions, suggestions);
    assert.deepEqual(err.failedGroups, failed, "every failure is listed, named or not");
    assert.ok(Object.isFrozen(err.failedGroups));
  }
  assert.deepEqual(new UnknownResourceError("x").failedGroups, []);
});
