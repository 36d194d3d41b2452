import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { Lister } from "../../src/informer/lister.ts";

// A stored tombstone is in the namespace of its key, whichever path serves
// the namespace index: the layout (namespaceIndexFunc under
// metaNamespaceKeyFunc), a table (the function wrapped), or another key
// function. (client-go's MetaNamespaceIndexFunc fails on a tombstone.)

const tombstone = (key: string) =>
  new DeletedFinalStateUnknown(key, {
    metadata: { name: "stale", namespace: "elsewhere" },
  }) as unknown as KubeObject;

function indexers() {
  return {
    layout: new Indexer<KubeObject>(metaNamespaceKeyFunc, {
      [NAMESPACE_INDEX]: namespaceIndexFunc,
    }),
    "wrapped index function": new Indexer<KubeObject>(metaNamespaceKeyFunc, {
      [NAMESPACE_INDEX]: (o) => namespaceIndexFunc(o),
    }),
    "wrapped key function": new Indexer<KubeObject>((o) => metaNamespaceKeyFunc(o), {
      [NAMESPACE_INDEX]: namespaceIndexFunc,
    }),
  };
}

test("namespaceIndexFunc gives a tombstone its key's namespace", () => {
  const cases: [string, string][] = [["ns/a", "ns"], ["a", ""], ["a/b/c", "a/b"], ["/x", ""]];
  for (const [key, namespace] of cases) {
    assert.deepEqual(namespaceIndexFunc(tombstone(key)), [namespace], key);
  }
  assert.deepEqual(namespaceIndexFunc({ metadata: { name: "a", namespace: "ns" } }), ["ns"]);
  assert.deepEqual(namespaceIndexFunc({ metadata: { name: "a" } }), [""]);
});

test("a stored tombstone is found by index(NAMESPACE_INDEX, itself) and listed under its key's namespace on every path", () => {
  for (const [path, idx] of Object.entries(indexers())) {
    const t = tombstone("ns/a");
    const node = tombstone("node-1");
    const live = { metadata: { name: "b", namespace: "ns" } } as KubeObject;
    for (const o of [t, node, live]) idx.add(o);
    assert.deepEqual(idx.index(NAMESPACE_INDEX, t), [t, live], path);
    assert.deepEqual(idx.index(NAMESPACE_INDEX, node), [node], path);
    assert.deepEqual(idx.listIndexFuncValues(NAMESPACE_INDEX).sort(), ["", "ns"], path);
    assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/a", "ns/b"], path);
    assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, ""), [node], path);
    assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, "elsewhere"), [], path);
    assert.deepEqual(new Lister(idx).list({ namespace: "ns" }), [t, live], path);
    idx.delete(t);
    assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/b"], path);
  }
});

test("Lister.list without a namespace index filters a tombstone by its key's namespace too", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  const t = tombstone("ns/a");
  idx.add(t);
  assert.deepEqual(new Lister(idx).list({ namespace: "ns" }), [t]);
  assert.deepEqual(new Lister(idx).list({ namespace: "" }), []);
});
