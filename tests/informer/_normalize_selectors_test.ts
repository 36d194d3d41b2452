import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  normalizeFieldSelector,
  normalizeLabelSelector,
} from "../../src/informer/_normalize_selectors.ts";

test("normalizeLabelSelector gives equivalent selectors one form, and rejects invalid ones", () => {
  assert.equal(normalizeLabelSelector("tier in (b, a), app=web"), "app=web,tier in (a,b)");
  assert.equal(normalizeLabelSelector("app=web,tier in (a,b)"), "app=web,tier in (a,b)");
  assert.throws(() => normalizeLabelSelector("app=(web"), TypeError);
});

test("normalizeFieldSelector sorts terms, writes == as =, keeps escapes and spaces", () => {
  assert.equal(
    normalizeFieldSelector("status.phase!=Failed,metadata.name==a"),
    "metadata.name=a,status.phase!=Failed",
  );
  assert.equal(normalizeFieldSelector("b=1,,a=2,b=1"), "a=2,b=1");
  assert.equal(normalizeFieldSelector("metadata.name=x\\,y,a=1"), "a=1,metadata.name=x\\,y");
  assert.equal(normalizeFieldSelector("a\\===b"), "a\\==b", "an escaped = is part of the key");
  assert.equal(normalizeFieldSelector("a = b"), "a = b");
  assert.equal(normalizeFieldSelector(""), "");
});
