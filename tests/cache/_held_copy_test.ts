import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { contentDiffers, sameContent } from "../../src/cache/_held_copy.ts";

const base = () => ({
  kind: "ConfigMap",
  apiVersion: "v1",
  metadata: { name: "a", uid: "u", resourceVersion: "5", labels: { x: "1", y: "2" } },
  data: { list: [1, "two", null, { three: true }], n: 0, s: "" },
});

test("sameContent: equal JSON values member by member, in any member order; arrays in order", () => {
  const cases: Array<[string, unknown, unknown, boolean]> = [
    ["the same", base(), base(), true],
    ["members in another order", base(), {
      data: { s: "", n: 0, list: [1, "two", null, { three: true }] },
      metadata: { labels: { y: "2", x: "1" }, resourceVersion: "5", uid: "u", name: "a" },
      apiVersion: "v1",
      kind: "ConfigMap",
    }, true],
    ["an array in another order", base(), {
      ...base(),
      data: { ...base().data, list: ["two", 1, null, { three: true }] },
    }, false],
    ["a longer array", base(), {
      ...base(),
      data: { ...base().data, list: [1, "two", null, { three: true }, 5] },
    }, false],
    ["a nested member more", base(), {
      ...base(),
      metadata: { ...base().metadata, labels: { x: "1", y: "2", z: "3" } },
    }, false],
    ["a nested member less", base(), {
      ...base(),
      metadata: { ...base().metadata, labels: { x: "1" } },
    }, false],
    ["a number for a string", base(), { ...base(), data: { ...base().data, n: "0" } }, false],
    ["null for an object", base(), { ...base(), data: null }, false],
    ["an object for an array", base(), { ...base(), data: { ...base().data, list: {} } }, false],
    ["an array for an object", { a: { 0: 1 } }, { a: [1] }, false],
    ["a member undefined on one side only", { a: 1, b: undefined }, { a: 1 }, false],
    [
      "listed without kind and apiVersion (a list item)",
      base(),
      (() => {
        const { kind: _k, apiVersion: _a, ...rest } = base();
        return rest;
      })(),
      true,
    ],
    [
      "held without kind, listed with it (a streaming list's initial event)",
      (() => {
        const { kind: _k, ...rest } = base();
        return rest;
      })(),
      base(),
      true,
    ],
    ["another kind", base(), { ...base(), kind: "Secret" }, false],
    ["a held member more (not kind or apiVersion)", { ...base(), status: {} }, base(), false],
    ["not objects", 1, 1, false],
    ["arrays at the top", [base()], [base()], false],
    ["null", null, base(), false],
  ];
  for (const [what, held, listed, same] of cases) {
    assert.equal(sameContent(held, listed), same, what);
  }
});

test("sameContent: objects that are not plain are different, and so is anything nested deeper than 256 levels, without overflowing the stack", () => {
  assert.equal(sameContent({ a: new Map([[1, 2]]) }, { a: new Map() }), false);
  assert.equal(sameContent({ a: new Date(0) }, { a: new Date(0) }), false);
  const nullProto = () => Object.assign(Object.create(null), { a: 1 });
  assert.equal(sameContent({ x: nullProto() }, { x: nullProto() }), true, "prototype-less");
  const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
  assert.equal(sameContent({ d: nested(200) }, { d: nested(200) }), true);
  assert.equal(sameContent({ d: nested(300) }, { d: nested(300) }), false);
  assert.equal(sameContent({ d: nested(20_000) }, { d: nested(20_000) }), false);
  const arrays = (depth: number) => JSON.parse(`${"[".repeat(depth)}1${"]".repeat(depth)}`);
  assert.equal(sameContent({ d: arrays(20_000) }, { d: arrays(20_000) }), false);
});

test("contentDiffers: only a provable difference counts; content that cannot be compared is no difference", () => {
  const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
  class Spec {
    constructor(public replicas: number) {}
  }
  const meta = { name: "a", uid: "u", resourceVersion: "5" };
  const cases: Array<[string, unknown, unknown, boolean]> = [
    ["the same", { metadata: meta, data: { x: "1" } }, { metadata: meta, data: { x: "1" } }, false],
    [
      "a changed value",
      { metadata: meta, data: { x: "1" } },
      { metadata: meta, data: { x: "2" } },
      true,
    ],
    ["a member added", { metadata: meta }, { metadata: meta, data: {} }, true],
    ["a member gone", { metadata: meta, data: {} }, { metadata: meta }, true],
    ["an array longer", { metadata: meta, l: [1] }, { metadata: meta, l: [1, 2] }, true],
    ["Dates", { metadata: meta, t: new Date(0) }, { metadata: meta, t: new Date(0) }, false],
    [
      "class instances",
      { metadata: meta, s: new Spec(1) },
      { metadata: meta, s: new Spec(2) },
      false,
    ],
    ["a class instance at the top", new Spec(1), new Spec(2), false],
    ["too deep", { metadata: meta, d: nested(300) }, { metadata: meta, d: nested(300) }, false],
    [
      "a Date beside a changed value",
      { metadata: meta, t: new Date(0), data: { x: "1" } },
      { metadata: meta, t: new Date(0), data: { x: "2" } },
      true,
    ],
    [
      "too deep beside a changed value, in either order",
      { data: { x: "1" }, d: nested(300), e: 1 },
      { d: nested(300), e: 2, data: { x: "1" } },
      true,
    ],
    // a Date stands for its JSON string: not compared
    ["a Date against its JSON", { t: new Date(0) }, { t: "1970-01-01T00:00:00.000Z" }, false],
    ["a class instance against null", { s: new Spec(1) }, { s: null }, false],
    ["a class instance against an array", { s: new Spec(1) }, { s: [1] }, false],
    ["an array against an object", { l: [] }, { l: {} }, true],
  ];
  for (const [what, held, listed, differs] of cases) {
    assert.equal(contentDiffers(held, listed), differs, what);
    if (differs) assert.equal(sameContent(held, listed), false, `${what}: not the same either`);
  }
});

test("sameContent and contentDiffers end on objects that share parts or hold cycles (a walk per path would be exponential)", () => {
  // a part reachable twice from its parent, 300 levels down: 2^300 paths
  const dag = (depth: number) => {
    let node: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < depth; i++) node = { l: node, r: node };
    return node;
  };
  const cyclic = () => {
    const s: Record<string, unknown> = { x: 1 };
    s.l = s;
    s.r = s;
    return s;
  };
  for (const [what, make] of [["shared parts", () => dag(300)], ["cycles", cyclic]] as const) {
    const held = { metadata: { name: "a" }, spec: make() };
    const listed = { metadata: { name: "a" }, spec: make() };
    assert.equal(sameContent(held, listed), false, `${what}: not the same`);
    assert.equal(contentDiffers(held, listed), false, `${what}: no provable difference`);
    // a provable difference beside it, compared first, still counts
    const changed = { data: { x: "2" }, ...listed };
    assert.equal(contentDiffers({ data: { x: "1" }, ...held }, changed), true, what);
  }
  // shared parts within the depth limit: equal, and compared within the budget
  assert.equal(sameContent({ spec: dag(15) }, { spec: dag(15) }), true);
});
