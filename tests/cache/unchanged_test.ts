import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { MemoryStore, type Store } from "../../src/cache/store.ts";
import { InformerStore } from "../../src/informer/informer_store.ts";

function cm(name: string, uid: string | undefined, rv: string | undefined): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "ns", uid, resourceVersion: rv },
  } as KubeObject;
}

const stores: Array<[string, () => Store<KubeObject> & { unchanged(o: KubeObject): unknown }]> = [
  ["MemoryStore", () => new MemoryStore<KubeObject>(metaNamespaceKeyFunc)],
  ["Indexer", () => new Indexer<KubeObject>(metaNamespaceKeyFunc, { ns: namespaceIndexFunc })],
  ["InformerStore", () => new InformerStore<KubeObject>()],
];

// What a freshly listed object is checked against: the stored cm "a" (uid u1, rv 5).
const CASES: Array<[string, unknown, boolean]> = [
  ["same key, uid and resourceVersion", cm("a", "u1", "5"), true],
  ["a newer resourceVersion", cm("a", "u1", "6"), false],
  ["another uid (deleted and re-created)", cm("a", "u2", "5"), false],
  ["another key", cm("b", "u1", "5"), false],
  ["no uid", cm("a", undefined, "5"), false],
  ["no resourceVersion", cm("a", "u1", undefined), false],
  ["an empty resourceVersion", cm("a", "u1", ""), false],
  ["no metadata", { kind: "ConfigMap" }, false],
  ["metadata null", { metadata: null }, false],
  ["null", null, false],
  ["a number", 7, false],
  ["a string", "a", false],
  ["an array", [cm("a", "u1", "5")], false],
  ["no kind or apiVersion (as list items come)", strip(cm("a", "u1", "5")), true],
  ["the same version with other content (a default applied on read)", {
    ...cm("a", "u1", "5"),
    data: { added: "by the server" },
  }, false],
  ["the same version with other metadata", {
    ...cm("a", "u1", "5"),
    metadata: { ...cm("a", "u1", "5").metadata, labels: { x: "y" } },
  }, false],
  ["another kind", { ...cm("a", "u1", "5"), kind: "Secret" }, false],
];

/** The object without its kind and apiVersion. */
function strip(obj: KubeObject): unknown {
  const { kind: _k, apiVersion: _a, ...rest } = obj;
  return rest;
}

for (const [storeName, make] of stores) {
  test(`${storeName}.unchanged returns the stored object only for the same key, uid and resourceVersion, and never throws`, () => {
    const store = make();
    const held = cm("a", "u1", "5");
    store.replace([held, cm("b", "u3", "4")], "9");
    const stored = store.getByKey("ns/a"); // an InformerStore holds the transformed object
    assert.ok(stored);
    for (const [what, listed, same] of CASES) {
      const got = store.unchanged(listed as KubeObject);
      assert.equal(got, same ? stored : undefined, what);
    }
  });

  test(`${storeName}.unchanged finds nothing in an empty store, nor for a stored object without uid or version`, () => {
    const store = make();
    assert.equal(store.unchanged(cm("a", "u1", "5")), undefined, "empty");
    store.replace([cm("a", undefined, "5"), cm("b", "u1", undefined)], "9");
    assert.equal(store.unchanged(cm("a", undefined, "5")), undefined, "stored without uid");
    assert.equal(store.unchanged(cm("b", "u1", undefined)), undefined, "stored without version");
  });
}

test("InformerStore with a transform reuses nothing: a relist's objects are each transformed once by replace", () => {
  let calls = 0;
  // not idempotent: a second pass over one object would show
  const store = new InformerStore<KubeObject>({
    transform: (obj) => {
      calls++;
      return {
        ...obj,
        metadata: { ...obj.metadata, labels: { seen: `(${obj.metadata.labels?.seen ?? ""})` } },
      };
    },
  });
  store.replace([cm("a", "u1", "5"), cm("b", "u2", "5")], "5");
  assert.equal(calls, 2);
  const listed = [cm("a", "u1", "5"), cm("b", "u2", "8")];
  for (const o of listed) assert.equal(store.unchanged(o), undefined);
  assert.equal(calls, 2, "unchanged never calls the transform");
  store.replace(listed, "8");
  assert.equal(calls, 4);
  assert.equal(store.getByKey("ns/a")!.metadata.labels?.seen, "()");
  assert.equal(store.getByKey("ns/b")!.metadata.resourceVersion, "8");
});

test("InformerStore without a transform: content differing at the same version is not reused", () => {
  const store = new InformerStore<KubeObject>();
  store.replace([cm("a", "u1", "5")], "5");
  const changed = { ...cm("a", "u1", "5"), data: { b: "defaulted" } };
  assert.equal(store.unchanged(changed), undefined);
  store.replace([changed], "6");
  assert.deepEqual(store.getByKey("ns/a")!.data, { b: "defaulted" });
});
