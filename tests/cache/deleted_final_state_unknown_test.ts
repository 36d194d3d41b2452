import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";

test("tombstone keeps its key and the last known object", () => {
  const last = { metadata: { name: "a", namespace: "default" } };
  const tombstone = new DeletedFinalStateUnknown("default/a", last);
  assert.equal(tombstone.key, "default/a");
  assert.equal(tombstone.obj, last);
});

test("tombstone accepts an unknown final state", () => {
  const tombstone = new DeletedFinalStateUnknown("node-1", undefined);
  assert.equal(tombstone.key, "node-1");
  assert.equal(tombstone.obj, undefined);
});

test("tombstone rejects an empty or non-string key", () => {
  assert.throws(() => new DeletedFinalStateUnknown("", {}), TypeError);
  // @ts-expect-error: a number is not a key
  assert.throws(() => new DeletedFinalStateUnknown(7, {}), TypeError);
});
