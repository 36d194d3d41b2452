import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { LabelSelector, labelSelector } from "../../src/informer/label_selector.ts";

test("label selector: equality, inequality, existence", () => {
  const s = LabelSelector.parse("app=web, tier==front,env!=prod,team,!canary");
  assert.equal(s.matches({ app: "web", tier: "front", team: "a" }), true);
  assert.equal(s.matches({ app: "web", tier: "front", team: "a", env: "dev" }), true);
  assert.equal(s.matches({ app: "web", tier: "front", team: "a", env: "prod" }), false);
  assert.equal(s.matches({ app: "web", tier: "front" }), false, "team must exist");
  assert.equal(s.matches({ app: "web", tier: "front", team: "a", canary: "" }), false);
  assert.equal(s.matches(undefined), false);
});

test("label selector: set-based in and notin, and integer comparisons", () => {
  const s = LabelSelector.parse(
    "app.kubernetes.io/name in (web, api),zone notin (a,b),rank>2,age<10",
  );
  assert.equal(s.matches({ "app.kubernetes.io/name": "api", rank: "3", age: "9" }), true);
  assert.equal(s.matches({ "app.kubernetes.io/name": "db", rank: "3", age: "9" }), false);
  assert.equal(
    s.matches({ "app.kubernetes.io/name": "web", zone: "a", rank: "3", age: "9" }),
    false,
  );
  assert.equal(s.matches({ "app.kubernetes.io/name": "web", rank: "2", age: "9" }), false);
  assert.equal(s.matches({ "app.kubernetes.io/name": "web", rank: "x", age: "9" }), false);
});

test("label selector: the empty selector matches everything; toString round-trips", () => {
  assert.equal(LabelSelector.parse("").empty, true);
  assert.equal(LabelSelector.parse("  ").matches({}), true);
  const text = "a=1,b!=2,c in (x,y),d notin (z,w),e,!f,g>1";
  assert.equal(LabelSelector.parse(text).toString(), text);
  assert.equal(LabelSelector.parse("a=").matches({ a: "" }), true);
});

test("label selector: invalid syntax throws a TypeError naming the selector", () => {
  for (
    const bad of [
      "=a",
      "a in b",
      "a in (b",
      "a b",
      "a>b",
      "a,,b",
      "a=b=c",
      "a=(b)",
      "!",
      "a=b;c",
      "a=b,",
    ]
  ) {
    assert.throws(
      () => LabelSelector.parse(bad),
      (e: unknown) => e instanceof TypeError && e.message.includes(JSON.stringify(bad)),
      bad,
    );
  }
});

test("label selector: the structured form (matchLabels, matchExpressions)", () => {
  const s = labelSelector({
    matchLabels: { app: "web" },
    matchExpressions: [
      { key: "tier", operator: "In", values: ["front", "edge"] },
      { key: "env", operator: "NotIn", values: ["prod"] },
      { key: "team", operator: "Exists" },
      { key: "canary", operator: "DoesNotExist" },
    ],
  });
  assert.equal(s.matches({ app: "web", tier: "edge", team: "x" }), true);
  assert.equal(s.matches({ app: "web", tier: "edge" }), false);
  assert.equal(s.toString(), "app=web,tier in (front,edge),env!=prod,team,!canary");
  assert.equal(labelSelector(s), s);
  assert.equal(labelSelector({}).matches({ any: "thing" }), true);
  assert.throws(
    () => labelSelector({ matchExpressions: [{ key: "a", operator: "In" }] }),
    TypeError,
  );
  assert.throws(
    () => labelSelector({ matchExpressions: [{ key: "a", operator: "Bogus" as never }] }),
    TypeError,
  );
});

test("LabelSelector.normalized sorts requirements and set values, drops duplicates", () => {
  const norm = (s: string) => LabelSelector.parse(s).normalized().toString();
  assert.equal(norm("y=2,x=1"), "x=1,y=2");
  assert.equal(norm(" y = 2 ,  x==1 "), "x=1,y=2");
  assert.equal(norm("k in (b,a,b)"), "k in (a,b)");
  assert.equal(norm("k in (a)"), "k=a");
  assert.equal(norm("k notin (b,a),!z,a,a"), "a,k notin (a,b),!z");
  assert.equal(norm("k!=a,k"), norm("k,k!=a"));
  assert.equal(norm(""), "");
  const sel = LabelSelector.parse("tier in (b,a),app=web").normalized();
  assert.ok(sel.matches({ app: "web", tier: "b" }));
  assert.ok(!sel.matches({ app: "web", tier: "c" }));
});
