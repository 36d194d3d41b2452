import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { Lister } from "../../src/informer/lister.ts";
import { LabelSelector } from "../../src/informer/label_selector.ts";

const o = (
  name: string,
  namespace: string | undefined,
  labels: Record<string, string> = {},
): KubeObject => ({
  metadata: { name, namespace, labels },
});

function fill(cache: Indexer<KubeObject>): Lister<KubeObject> {
  cache.add(o("a", "web", { tier: "front" }));
  cache.add(o("b", "web", { tier: "back" }));
  cache.add(o("c", "db", { tier: "back" }));
  cache.add(o("node-1", undefined, { tier: "back" }));
  return new Lister(cache);
}

for (
  const [label, indexers] of [["with", { namespace: namespaceIndexFunc }], ["without", {}]] as const
) {
  test(`lister gets and lists by namespace and label selector, ${label} a namespace index`, () => {
    const lister = fill(new Indexer<KubeObject>(metaNamespaceKeyFunc, indexers));
    assert.equal(lister.get("web", "a")?.metadata.name, "a");
    assert.equal(lister.get("", "node-1")?.metadata.name, "node-1");
    assert.equal(lister.get("db", "a"), undefined);
    const names = (objs: KubeObject[]) => objs.map((x) => x.metadata.name).sort();
    assert.deepEqual(names(lister.list()), ["a", "b", "c", "node-1"]);
    assert.deepEqual(names(lister.list({ namespace: "web" })), ["a", "b"]);
    assert.deepEqual(names(lister.list({ namespace: "" })), ["node-1"]);
    assert.deepEqual(names(lister.list({ labelSelector: "tier=back" })), ["b", "c", "node-1"]);
    assert.deepEqual(
      names(lister.list({ namespace: "web", labelSelector: { matchLabels: { tier: "back" } } })),
      ["b"],
    );
    assert.deepEqual(
      names(lister.list({ labelSelector: LabelSelector.parse("tier notin (back)") })),
      ["a"],
    );
  });
}

test("lister rejects what is not an indexer, and invalid selectors", () => {
  assert.throws(() => new Lister({} as never), TypeError);
  const lister = fill(new Indexer<KubeObject>(metaNamespaceKeyFunc));
  assert.throws(() => lister.list({ labelSelector: "a in" }), TypeError);
});
