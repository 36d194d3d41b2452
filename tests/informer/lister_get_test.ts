import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { Indexer, type IndexerLike } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { InformerStore } from "../../src/informer/informer_store.ts";
import { Lister } from "../../src/informer/lister.ts";

// Lister.get finds an object by namespace and name in the library's own
// indexers without building the key "namespace/name" for getByKey to take
// apart; it answers as getByKey of that key does, whatever the cache.

const objects: KubeObject[] = [
  { metadata: { name: "a", namespace: "ns" } },
  { metadata: { name: "b", namespace: "ns" } },
  { metadata: { name: "node-1" } },
  { metadata: { name: "x", namespace: "a/b" } }, // (a namespace holding "/")
  { metadata: { name: "lone", namespace: "solo" } },
];
const probes: [string, string][] = [
  ["ns", "a"],
  ["ns", "b"],
  ["ns", "zz"],
  ["", "node-1"],
  ["", "ns/a"], // (the name holds the key: as getByKey("ns/a"))
  ["a/b", "x"],
  ["a", "b/x"], // (as getByKey("a/b/x"))
  ["solo", "lone"],
  ["solo", "other"],
  ["absent", "a"],
  ["", "zz"],
];

function caches(): [string, IndexerLike<KubeObject>][] {
  const layout = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  const generic = new Indexer<KubeObject>((o) => metaNamespaceKeyFunc(o));
  const store = new InformerStore<KubeObject>();
  const custom = new InformerStore<KubeObject>({ keyFunc: (o) => metaNamespaceKeyFunc(o) });
  layout.replace(objects, "1");
  generic.replace(objects, "1");
  store.replace(objects, "1");
  custom.replace(objects, "1");
  layout.add(new DeletedFinalStateUnknown("gone/t", {}) as unknown as KubeObject);
  return [["layout", layout], ["generic", generic], ["informer store", store], [
    "custom key",
    custom,
  ]];
}

test("Lister.get answers as getByKey of namespace/name, on every cache", () => {
  for (const [label, cache] of caches()) {
    const lister = new Lister(cache);
    for (const [namespace, name] of probes) {
      const key = namespace ? `${namespace}/${name}` : name;
      assert.equal(lister.get(namespace, name), cache.getByKey(key), `${label}: ${key}`);
    }
    assert.equal(lister.get("ns", "a"), objects[0], label);
  }
  const [, layout] = caches()[0];
  assert.ok(new Lister(layout).get("gone", "t") instanceof DeletedFinalStateUnknown);
});

test("Lister.get on the library's indexers under the default key function does not go through getByKey; on another IndexerLike it does", () => {
  for (const [label, cache] of caches().filter(([l]) => l === "layout" || l === "informer store")) {
    cache.getByKey = () => {
      throw new Error("getByKey called");
    };
    assert.equal(new Lister(cache).get("ns", "b"), objects[1], label);
  }
  // any other indexer: its getByKey, with the key
  const asked: string[] = [];
  const inner = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  inner.replace(objects, "1");
  const other = {
    getByKey: (key: string) => (asked.push(key), inner.getByKey(key)),
    byIndex: (i: string, v: string) => inner.byIndex(i, v),
    getIndexers: () => inner.getIndexers(),
    list: () => inner.list(),
  } as unknown as IndexerLike<KubeObject>;
  assert.equal(new Lister(other).get("ns", "a"), objects[0]);
  assert.equal(new Lister(other).get("", "node-1"), objects[2]);
  assert.deepEqual(asked, ["ns/a", "node-1"]);
});
