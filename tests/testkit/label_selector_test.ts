/** Label and field selector parsing, as the API server accepts and rejects them. */
import assert from "node:assert/strict";
import { parseFieldSelector } from "../../src/testkit/_field_selector.ts";
import { parseLabelSelector, SelectorError } from "../../src/testkit/_label_selector.ts";
import { test } from "../_test.ts";

test("label selectors match equality, existence, sets and comparisons", () => {
  const labels = { app: "web", tier: "2", "example.com/team": "a" };
  const cases: [string, boolean][] = [
    ["", true],
    ["app=web", true],
    ["app==web", true],
    ["app = web , tier=2", true],
    ["app!=web", false],
    ["missing!=x", true],
    ["app", true],
    ["!app", false],
    ["!missing", true],
    ["app in (web, api)", true],
    ["app in (api)", false],
    ["missing in (x)", false],
    ["app notin (api)", true],
    ["missing notin (x)", true],
    ["example.com/team=a", true],
    ["tier>1", true],
    ["tier<2", false],
    ["app=web,tier in (1,3)", false],
    ["app=", false],
  ];
  for (const [selector, expected] of cases) {
    assert.equal(parseLabelSelector(selector)(labels), expected, selector);
  }
  assert.equal(parseLabelSelector("!app")(undefined), true, "no labels at all");
});

test("label selectors that do not parse throw SelectorError", () => {
  for (const bad of ["app=a b", "=x", "app in x", "app in (a b)", "a!b", "app>x"]) {
    assert.throws(() => parseLabelSelector(bad), SelectorError, bad);
  }
});

test("field selectors match metadata.name and metadata.namespace, and reject other fields", () => {
  const obj = { metadata: { name: "cm1", namespace: "fx" } };
  assert.equal(parseFieldSelector("metadata.name=cm1")(obj), true);
  assert.equal(parseFieldSelector("metadata.name==cm2")(obj), false);
  assert.equal(parseFieldSelector("metadata.namespace!=fx")(obj), false);
  assert.equal(parseFieldSelector("metadata.name=cm1,metadata.namespace=fx")(obj), true);
  assert.throws(() => parseFieldSelector("spec.x=1"), /field label not supported: spec.x/);
  assert.throws(() => parseFieldSelector("nonsense"), SelectorError);
});
