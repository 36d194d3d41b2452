import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  addToIndices,
  checkValues,
  type Indices,
  removeFromIndices,
} from "../../src/cache/_index_map.ts";

test("checkValues removes duplicates and returns a copy", () => {
  const values = ["a", "b", "a"];
  const checked = checkValues("tags", values);
  assert.deepEqual(checked, ["a", "b"]);
  const one = ["x"];
  assert.notEqual(checkValues("tags", one), one);
});

test("checkValues rejects results that are not arrays of strings, naming the index", () => {
  for (const bad of [undefined, "a", [1], [null], { length: 0 }]) {
    assert.throws(() => checkValues("tags", bad), {
      name: "TypeError",
      message: /"tags" must return an array of strings/,
    });
  }
});

test("addToIndices and removeFromIndices leave no empty buckets", () => {
  const indices: Indices = new Map([["ns", new Map()], ["tag", new Map()]]);
  const values = new Map([["ns", ["default"]], ["tag", ["x", "y"]]]);
  addToIndices(indices, "default/a", values);
  addToIndices(indices, "default/b", new Map([["ns", ["default"]], ["tag", ["y"]]]));
  assert.deepEqual([...indices.get("tag")!.keys()], ["x", "y"]);
  removeFromIndices(indices, "default/a", values);
  assert.deepEqual([...indices.get("tag")!.keys()], ["y"]);
  assert.deepEqual([...indices.get("ns")!.get("default")!], ["default/b"]);
  removeFromIndices(indices, "default/b", new Map([["ns", ["default"]], ["tag", ["y"]]]));
  assert.equal(indices.get("ns")!.size, 0);
  assert.equal(indices.get("tag")!.size, 0);
});

test("removeFromIndices ignores values that have no bucket", () => {
  const indices: Indices = new Map([["tag", new Map()]]);
  removeFromIndices(indices, "k", new Map([["tag", ["missing"]]]));
  assert.equal(indices.get("tag")!.size, 0);
});
