import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { joinKey, NamespacedMap, splitKey } from "../../src/cache/_namespaced_map.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";

test("splitKey and joinKey are inverse for every key, odd ones included", () => {
  const table: [key: string, namespace: string, name: string][] = [
    ["ns/cm", "ns", "cm"],
    ["node-1", "", "node-1"], // cluster-scoped
    ["", "", ""],
    ["/x", "", "/x"], // a tombstone's key with its only "/" first: not cluster-scoped "x"
    ["/", "", "/"],
    ["x/", "x", ""],
    ["a/b/c", "a/b", "c"], // a namespace holding "/" (names never do)
    ["//x", "/", "x"],
    ["a//b", "a/", "b"],
    ["/a/b", "/a", "b"],
  ];
  for (const [key, namespace, name] of table) {
    assert.deepEqual(splitKey(key), [namespace, name], key);
    assert.equal(joinKey(namespace, name), key, key);
  }
});

test("splitKey gives each object's namespace and name under metaNamespaceKeyFunc", () => {
  const objects = [
    { metadata: { name: "a", namespace: "ns" } },
    { metadata: { name: "a" } },
    { metadata: { name: "a", namespace: "" } },
    { metadata: { name: "a", namespace: "odd/ns" } },
    { metadata: { name: "a.b-c", namespace: "kube-system" } },
  ];
  for (const obj of objects) {
    const key = metaNamespaceKeyFunc(obj);
    assert.deepEqual(splitKey(key), [obj.metadata.namespace ?? "", obj.metadata.name], key);
  }
});

test("NamespacedMap stores, replaces, deletes and drops empty namespaces", () => {
  const m = new NamespacedMap<number>();
  assert.equal(m.set("ns", "a", 1), undefined);
  assert.equal(m.set("", "node", 2), undefined);
  assert.equal(m.set("ns", "b", 3), undefined);
  assert.equal(m.set("ns", "a", 4), 1, "returns what it replaced");
  assert.equal(m.size, 3);
  assert.equal(m.get("ns", "a"), 4);
  assert.equal(m.get("ns", "zz"), undefined);
  assert.equal(m.get("other", "a"), undefined);
  // namespace by namespace, each in the order of its names' first store
  assert.deepEqual(m.values(), [4, 3, 2]);
  assert.deepEqual(m.keys(), ["ns/a", "ns/b", "node"]);
  const seen: [string, number][] = [];
  m.forEach((key, v) => seen.push([key, v]));
  assert.deepEqual(seen, [["ns/a", 4], ["ns/b", 3], ["node", 2]]);
  assert.deepEqual(m.namespaces(), ["ns", ""]);
  assert.deepEqual(m.namesIn("ns"), ["a", "b"]);
  assert.deepEqual(m.valuesIn("ns"), [4, 3]);
  assert.equal(m.delete("ns", "a"), 4);
  assert.equal(m.delete("ns", "a"), undefined);
  assert.equal(m.delete("absent", "a"), undefined);
  assert.equal(m.delete("ns", "b"), 3);
  assert.deepEqual(m.namespaces(), [""], "an emptied namespace is dropped");
  assert.deepEqual(m.namesIn("ns"), []);
  assert.deepEqual(m.valuesIn("ns"), []);
  m.set("ns", "c", 5);
  assert.deepEqual(m.namespaces(), ["", "ns"], "a namespace back goes last");
  assert.equal(m.size, 2);
});

test("NamespacedMap with nameOf holds a namespace's lone value bare, a Map from its second, bare again at one", () => {
  type V = { name: string; v: number };
  const m = new NamespacedMap<V>((value) => value.name);
  const a1 = { name: "a", v: 1 };
  const a2 = { name: "a", v: 2 };
  const b = { name: "b", v: 3 };
  assert.equal(m.set("ns", "a", a1), undefined);
  assert.equal(m.holdsBare("ns"), true, "one value: no Map");
  assert.equal(m.get("ns", "a"), a1);
  assert.equal(m.get("ns", "b"), undefined, "a bare value answers only to its name");
  assert.equal(m.delete("ns", "b"), undefined);
  assert.equal(m.set("other", "x", { name: "x", v: 9 }), undefined);
  assert.equal(m.set("ns", "a", a2), a1, "the same name: replaced, still bare");
  assert.equal(m.holdsBare("ns"), true);
  assert.deepEqual(
    m.namespaces(),
    ["ns", "other"],
    "a replaced bare value keeps its namespace's place",
  );
  assert.equal(m.set("ns", "b", b), undefined);
  assert.equal(m.holdsBare("ns"), false, "a Map from the second value");
  assert.equal(m.size, 3);
  assert.deepEqual(m.namesIn("ns"), ["a", "b"], "the bare value first, where it was stored first");
  assert.deepEqual(m.valuesIn("ns"), [a2, b]);
  assert.deepEqual(m.keys(), ["ns/a", "ns/b", "other/x"]);
  assert.equal(m.delete("ns", "a"), a2);
  assert.equal(m.holdsBare("ns"), true, "bare again at one value");
  assert.equal(m.get("ns", "b"), b);
  assert.equal(m.get("ns", "a"), undefined);
  const seen: string[] = [];
  m.forEach((key, value) => seen.push(`${key}=${value.v}`));
  assert.deepEqual(seen, ["ns/b=3", "other/x=9"]);
  const inNs: string[] = [];
  m.forEachIn("ns", (value, name) => inNs.push(`${name}=${value.v}`));
  m.forEachIn("absent", () => inNs.push("absent"));
  assert.deepEqual(inNs, ["b=3"]);
  assert.deepEqual(m.values().map((v) => v.v), [3, 9]);
  assert.deepEqual(m.namesIn("other"), ["x"]);
  assert.equal(m.delete("ns", "b"), b);
  assert.equal(m.delete("other", "x")?.v, 9);
  assert.equal(m.size, 0);
  assert.deepEqual(m.namespaces(), []);
  assert.equal(m.holdsBare("ns"), false);
  // without nameOf, every namespace is a Map (any value can be stored)
  const plain = new NamespacedMap<number>();
  plain.set("ns", "a", 1);
  assert.equal(plain.holdsBare("ns"), false);
  assert.equal(plain.get("ns", "a"), 1);
});
