import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { KeyError } from "../../src/cache/key_error.ts";
import { type KeyFunc, metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { MemoryStore } from "../../src/cache/store.ts";

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

function cm(name: string, namespace?: string, data: Record<string, string> = {}): ConfigMap {
  return { kind: "ConfigMap", metadata: namespace ? { name, namespace } : { name }, data };
}

function newStore(): MemoryStore<ConfigMap> {
  return new MemoryStore<ConfigMap>(metaNamespaceKeyFunc);
}

test("store adds objects and gets them by object and by key", () => {
  const store = newStore();
  const a = cm("a", "default");
  store.add(a);
  assert.equal(store.get(cm("a", "default")), a);
  assert.equal(store.getByKey("default/a"), a);
  assert.equal(store.getByKey("other/a"), undefined);
  assert.equal(store.get(cm("b", "default")), undefined);
  assert.equal(store.size, 1);
});

test("store lists objects and keys in insertion order as new arrays", () => {
  const store = newStore();
  store.add(cm("b", "ns"));
  store.add(cm("a", "ns"));
  store.add(cm("node-1"));
  assert.deepEqual(store.listKeys(), ["ns/b", "ns/a", "node-1"]);
  assert.deepEqual(store.list().map((o) => o.metadata.name), ["b", "a", "node-1"]);
  const list = store.list();
  list.pop();
  assert.equal(store.list().length, 3);
});

test("store update replaces the object with the same key", () => {
  const store = newStore();
  store.add(cm("a", "default", { v: "1" }));
  store.update(cm("a", "default", { v: "2" }));
  assert.equal(store.size, 1);
  assert.deepEqual(store.getByKey("default/a")?.data, { v: "2" });
});

test("store update of an absent object inserts it, and add of a present one replaces it", () => {
  const store = newStore();
  store.update(cm("a", "default", { v: "1" }));
  assert.deepEqual(store.getByKey("default/a")?.data, { v: "1" });
  store.add(cm("a", "default", { v: "2" }));
  assert.deepEqual(store.getByKey("default/a")?.data, { v: "2" });
  assert.equal(store.size, 1);
});

test("store delete removes by key and ignores absent objects", () => {
  const store = newStore();
  store.add(cm("a", "default"));
  store.add(cm("b", "default"));
  store.delete(cm("a", "default", { stale: "content" }));
  store.delete(cm("zzz", "default"));
  assert.deepEqual(store.listKeys(), ["default/b"]);
});

test("store replace swaps in the new content", () => {
  const store = newStore();
  store.add(cm("old", "default"));
  store.replace([cm("x", "ns"), cm("y", "ns")], "100");
  assert.deepEqual(store.listKeys(), ["ns/x", "ns/y"]);
  assert.equal(store.getByKey("default/old"), undefined);
  store.replace([], "101");
  assert.equal(store.size, 0);
});

test("store replace keeps the later of two items with the same key", () => {
  const store = newStore();
  store.replace([cm("a", "ns", { v: "1" }), cm("a", "ns", { v: "2" })], "5");
  assert.equal(store.size, 1);
  assert.deepEqual(store.getByKey("ns/a")?.data, { v: "2" });
});

test("store replace leaves out an item whose key function throws and applies the rest", () => {
  const store = newStore();
  store.add(cm("keep", "default"));
  const bad = { metadata: { namespace: "ns" } } as ConfigMap;
  assert.throws(() => store.replace([cm("x", "ns"), bad], "7"), KeyError);
  assert.deepEqual(store.listKeys(), ["ns/x"]);
});

test("store add throws a KeyError for an object without a name and stores nothing", () => {
  const store = newStore();
  assert.throws(() => store.add({ metadata: {} }), KeyError);
  assert.equal(store.size, 0);
});

test("store resync is a no-op", () => {
  const store = newStore();
  store.add(cm("a", "default"));
  store.resync();
  assert.deepEqual(store.listKeys(), ["default/a"]);
});

test("store uses the key function it was given", () => {
  const byUid: KeyFunc<KubeObject> = (obj) => obj.metadata.uid ?? "";
  const store = new MemoryStore(byUid);
  store.add({ metadata: { name: "a", uid: "u1" } });
  store.add({ metadata: { name: "a", uid: "u2" } });
  assert.deepEqual(store.listKeys(), ["u1", "u2"]);
});

test("store constructor rejects a key function that is not a function", () => {
  // @ts-expect-error: not a function
  assert.throws(() => new MemoryStore("name"), TypeError);
});
