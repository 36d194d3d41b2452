import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { InformerStore } from "../../src/informer/informer_store.ts";

// A delete finds the deleted object's buckets from its recomputed index
// values, even when it is handed the stored object itself (the informer
// does): a few Map lookups, not one per distinct value of every index.

const N = 5_000;
const byOwner = (o: KubeObject) => [o.metadata.uid ?? ""];
const pod = (i: number, rv = "1"): KubeObject => ({
  metadata: { name: `p-${i}`, namespace: `ns-${i % 7}`, uid: `u-${i}`, resourceVersion: rv },
});
const pods = () => Array.from({ length: N }, (_, i) => pod(i));

/** How many Map#get calls `fn` makes: a deterministic cost figure. */
function mapGets(fn: () => void): number {
  const original = Map.prototype.get;
  let calls = 0;
  Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
    calls++;
    return original.call(this, key);
  };
  try {
    fn();
  } finally {
    Map.prototype.get = original;
  }
  return calls;
}

test("InformerStore.delete (a DELETED event) among 5,000 objects does a few lookups, not one per bucket", () => {
  for (const keyFunc of [undefined, (o: KubeObject) => metaNamespaceKeyFunc(o)]) {
    // with a custom key function the namespace index is a table too
    const store = new InformerStore<KubeObject>({
      keyFunc,
      indexers: { [NAMESPACE_INDEX]: namespaceIndexFunc, owner: byOwner },
    });
    store.replace(pods(), "1");
    const gets = mapGets(() => store.delete(pod(7, "2")));
    assert.ok(gets < 20, `${gets} Map#get calls for one delete among ${N} objects`);
    assert.equal(store.size, N - 1);
    assert.deepEqual(store.byIndex("owner", "u-7"), []);
    assert.equal(store.listIndexFuncValues("owner").length, N - 1);
    assert.equal(store.byIndex(NAMESPACE_INDEX, "ns-0").length, Math.ceil(N / 7) - 1);
  }
});

test("Indexer.delete of the stored object itself does a few lookups, and still unfiles an object changed in place", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, { owner: byOwner });
  idx.replace(pods(), "1");
  const stored = idx.getByKey("ns-0/p-7")!;
  const gets = mapGets(() => idx.delete(stored));
  assert.ok(gets < 20, `${gets} Map#get calls for one delete among ${N} objects`);
  assert.deepEqual(idx.byIndex("owner", "u-7"), []);
  assert.equal(idx.listIndexFuncValues("owner").length, N - 1);
  // changed in place to a value it is not filed under: the search finds it
  const changed = idx.getByKey("ns-1/p-8")!;
  changed.metadata.uid = "u-other";
  idx.delete(changed);
  assert.deepEqual(idx.byIndex("owner", "u-8"), []);
  assert.deepEqual(idx.byIndex("owner", "u-other"), []);
  assert.equal(idx.listIndexFuncValues("owner").length, N - 2);
  assert.equal(idx.size, N - 2);
});
