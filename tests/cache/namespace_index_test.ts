import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";

test("namespaceIndexFunc indexes an object by its namespace", () => {
  assert.deepEqual(namespaceIndexFunc({ metadata: { name: "a", namespace: "default" } }), [
    "default",
  ]);
});

test("namespaceIndexFunc indexes cluster-scoped objects under the empty string", () => {
  assert.deepEqual(namespaceIndexFunc({ metadata: { name: "node-1" } }), [""]);
});

test("NAMESPACE_INDEX is client-go's index name", () => {
  assert.equal(NAMESPACE_INDEX, "namespace");
});

test("namespace index groups objects of an indexer by namespace", () => {
  const store = new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  store.add({ metadata: { name: "a", namespace: "default" } });
  store.add({ metadata: { name: "b", namespace: "default" } });
  store.add({ metadata: { name: "c", namespace: "kube-system" } });
  store.add({ metadata: { name: "node-1" } });
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, "default").sort(), ["default/a", "default/b"]);
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, ""), ["node-1"]);
  assert.deepEqual(store.listIndexFuncValues(NAMESPACE_INDEX).sort(), [
    "",
    "default",
    "kube-system",
  ]);
});
