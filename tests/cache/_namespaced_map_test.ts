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
  assert.deepEqual([...m.inNamespace("ns")!.keys()], ["a", "b"]);
  assert.equal(m.delete("ns", "a"), 4);
  assert.equal(m.delete("ns", "a"), undefined);
  assert.equal(m.delete("absent", "a"), undefined);
  assert.equal(m.delete("ns", "b"), 3);
  assert.deepEqual(m.namespaces(), [""], "an emptied namespace is dropped");
  assert.equal(m.inNamespace("ns"), undefined);
  m.set("ns", "c", 5);
  assert.deepEqual(m.namespaces(), ["", "ns"], "a namespace back goes last");
  assert.equal(m.size, 2);
});
