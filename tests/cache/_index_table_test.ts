import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { checkValues, IndexTable, valuesOf } from "../../src/cache/_index_table.ts";

test("checkValues returns distinct values: the bare string for one, an empty list for none", () => {
  assert.deepEqual(checkValues("tags", ["a", "b", "a"]), ["a", "b"]);
  assert.equal(checkValues("tags", ["x"]), "x");
  assert.equal(checkValues("tags", ["x", "x"]), "x");
  assert.deepEqual(checkValues("tags", []), []);
  const many = ["a", "b"];
  assert.notEqual(checkValues("tags", many), many, "a copy: the caller's array is not kept");
});

test("checkValues rejects results that are not arrays of strings, naming the index", () => {
  for (const bad of [undefined, "a", [1], [null], { length: 0 }, ["a", 1]]) {
    assert.throws(() => checkValues("tags", bad), {
      name: "TypeError",
      message: /"tags" must return an array of strings/,
    });
  }
});

test("an IndexTable files keys under one or several values and leaves no empty bucket", () => {
  const t = new IndexTable();
  t.add("default/a", ["x", "y"]);
  t.add("default/b", "y");
  t.add("default/c", "y");
  t.add("default/d", []);
  assert.deepEqual(t.values(), ["x", "y"]);
  assert.deepEqual(t.keys("y"), ["default/a", "default/b", "default/c"]);
  t.remove("default/a", ["x", "y"]);
  assert.deepEqual(t.values(), ["y"]);
  t.remove("default/b", "y");
  assert.deepEqual(t.keys("y"), ["default/c"], "a set of one goes back to a bare key");
  t.remove("default/c", "y");
  t.remove("default/d", []);
  t.remove("never-filed", []);
  assert.deepEqual(t.values(), []);
  assert.deepEqual(t.keys("y"), []);
  assert.deepEqual(valuesOf("x"), ["x"]);
});

test("IndexTable.remove with stale values (a stored object mutated in place) or unknown ones searches every bucket", () => {
  const t = new IndexTable();
  t.add("k", ["a", "b"]);
  t.add("j", "a");
  t.remove("k", "c"); // the object now says "c": not where the key is
  assert.deepEqual(t.keys("a"), ["j"]);
  assert.deepEqual(t.values(), ["a"]);
  t.add("k", "b");
  t.remove("k", undefined); // its index function now throws
  assert.deepEqual(t.values(), ["a"]);
});

test("IndexTable.set moves a key to its new values, and leaves it where it is when they are the same", () => {
  const t = new IndexTable();
  t.add("k", "a");
  t.add("j", "a");
  t.set("k", "a", "a");
  assert.deepEqual(t.keys("a"), ["k", "j"], "unchanged, order kept");
  t.set("k", "a", ["b", "c"]);
  assert.deepEqual(t.keys("a"), ["j"]);
  assert.deepEqual(t.keys("b"), ["k"]);
  t.set("k", ["b", "c"], ["b", "c"]);
  t.set("k", ["b", "c"], []);
  assert.deepEqual(t.values(), ["a"]);
  t.set("new", [], "z");
  assert.deepEqual(t.keys("z"), ["new"]);
  t.set("new", "y", "y"); // stale: the key is under "z"
  assert.deepEqual(t.values(), ["a", "y"]);
});
