import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { canForceGc, heapUsed } from "../metrics/_heap.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";

// Heap after forced collections, with wide margins (deterministic enough: the
// figures measured are far from the bounds). One object per namespace is a
// common shape (kube-root-ca.crt, the default ServiceAccount, a tenant's
// quota): such a namespace must not pay for a Map of its own.

const N = 20_000;

async function bytesPerObject(perNamespace: number): Promise<number> {
  const objects: KubeObject[] = Array.from({ length: N }, (_, i) => ({
    metadata: {
      name: `o-${i % perNamespace}`,
      namespace: `tenant-${Math.floor(i / perNamespace)}`,
      resourceVersion: String(i),
    },
  }));
  const make = () => new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  make().replace(objects.slice(0, 100), "1"); // (warm up)
  const before = await heapUsed();
  const idx = make();
  idx.replace(objects, "1");
  const after = await heapUsed();
  assert.equal(idx.size, N);
  return (after - before) / N;
}

test("Indexer(namespace) heap per object: one object per namespace costs no Map (measured 46 B/object; a Map each: 230)", async () => {
  if (!canForceGc) return;
  const one = await bytesPerObject(1);
  assert.ok(one < 120, `${one.toFixed(0)} B/object with one object per namespace`);
  const fifty = await bytesPerObject(50);
  assert.ok(fifty < 90, `${fifty.toFixed(0)} B/object with 50 objects per namespace (measured 38)`);
});
