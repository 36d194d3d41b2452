import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { mulberry32 } from "../_fixtures.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer, type Indexers, type IndexFunc } from "../../src/cache/indexer.ts";
import { KeyError } from "../../src/cache/key_error.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";
import { keyedDelete, keyedUpdate, namespacedGet } from "../../src/cache/_keyed_update.ts";
import { forEachKeyed } from "../../src/cache/_keyed_entries.ts";

// The Indexer holds objects by namespace and name under metaNamespaceKeyFunc
// (and serves namespaceIndexFunc from that layout), by key otherwise. The
// same key function wrapped in another function takes the generic path: the
// two must answer alike.

const wrapped = (obj: KubeObject) => metaNamespaceKeyFunc(obj);
const sorted = (xs: string[]): string[] => [...xs].sort();
const byApp: IndexFunc<KubeObject> = (o) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []);

function cm(name: string, namespace?: string, app?: string, rv = "1"): KubeObject {
  return {
    metadata: {
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      resourceVersion: rv,
      ...(app ? { labels: { app } } : {}),
    },
  };
}

function both(indexers: Indexers<KubeObject>) {
  return [
    new Indexer<KubeObject>(metaNamespaceKeyFunc, indexers),
    new Indexer<KubeObject>(wrapped, indexers),
  ];
}

/** Everything an indexer answers, in its own order where the order is the same on both paths. */
function answers(idx: Indexer<KubeObject>, names: string[]) {
  const out: Record<string, unknown> = {
    size: idx.size,
    keys: sorted(idx.listKeys()),
    list: sorted(idx.list().map(metaNamespaceKeyFunc)),
  };
  for (const name of names) {
    const values = idx.listIndexFuncValues(name);
    out[`values ${name}`] = values;
    for (const v of values) {
      out[`keys ${name}=${v}`] = idx.indexKeys(name, v);
      out[`objects ${name}=${v}`] = idx.byIndex(name, v);
    }
    out[`absent ${name}`] = [idx.indexKeys(name, "absent"), idx.byIndex(name, "absent")];
  }
  return out;
}

test("the namespace/name layout answers as the generic path does over 3,000 random operations", () => {
  const seed = 20261206;
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const NAMES = ["a", "b", "c", "d", "e", "f"];
  const NAMESPACES = [undefined, "", "ns1", "ns2", "odd/ns"];
  const APPS = [undefined, "web", "db"];
  const indexers = { [NAMESPACE_INDEX]: namespaceIndexFunc, app: byApp };
  const [fast, generic] = both(indexers);
  const random = () => cm(pick(NAMES), pick(NAMESPACES), pick(APPS), String(rand()));
  for (let step = 0; step < 3000; step++) {
    const r = rand();
    const at = `seed ${seed}, step ${step}`;
    if (r < 0.4) {
      const obj = random();
      fast.update(obj);
      generic.update(obj);
    } else if (r < 0.55) {
      const obj = random();
      const key = metaNamespaceKeyFunc(obj);
      assert.equal(fast[keyedUpdate](key, obj), generic[keyedUpdate](key, obj), at);
    } else if (r < 0.7) {
      const obj = random();
      fast.delete(obj);
      generic.delete(obj);
    } else if (r < 0.8) {
      const obj = random();
      const key = metaNamespaceKeyFunc(obj);
      assert.equal(fast[keyedDelete](key, obj), generic[keyedDelete](key, obj), at);
    } else if (r < 0.83) {
      // (one copy per key: a key listed twice sits where the namespace index of
      // the generic path files it last, in the layout where it was first listed)
      const byKey = new Map<string, KubeObject>();
      for (let i = Math.floor(rand() * 20); i > 0; i--) {
        const obj = random();
        byKey.set(metaNamespaceKeyFunc(obj), obj);
      }
      const items = [...byKey.values()];
      fast.replace(items, String(step));
      generic.replace(items, String(step));
    } else if (r < 0.85) {
      // a tombstone stands for its key
      const obj = random();
      const tombstone = new DeletedFinalStateUnknown(metaNamespaceKeyFunc(obj), obj);
      fast.delete(tombstone as unknown as KubeObject);
      generic.delete(tombstone as unknown as KubeObject);
    } else {
      const probe = random();
      assert.equal(fast.get(probe), generic.get(probe), at);
      const key = metaNamespaceKeyFunc(probe);
      assert.equal(fast.getByKey(key), generic.getByKey(key), at);
      const { namespace = "", name } = probe.metadata;
      assert.equal(fast[namespacedGet](namespace, name!), generic.getByKey(key), at);
      assert.equal(generic[namespacedGet](namespace, name!), generic.getByKey(key), at);
      for (const name of [NAMESPACE_INDEX, "app"]) {
        assert.deepEqual(fast.index(name, probe), generic.index(name, probe), `${at} ${name}`);
      }
    }
    assert.deepEqual(
      answers(fast, [NAMESPACE_INDEX, "app"]),
      answers(generic, [NAMESPACE_INDEX, "app"]),
      at,
    );
    const pairs: [string, KubeObject][] = [];
    fast[forEachKeyed]((key, obj) => pairs.push([key, obj]));
    assert.deepEqual(pairs.map(([k]) => k), fast.listKeys(), at);
    assert.deepEqual(pairs.map(([, o]) => o), fast.list(), at);
    for (const [key, obj] of pairs) assert.equal(generic.getByKey(key), obj, at);
  }
});

test("the namespace/name layout: odd keys, tombstones, cluster-scoped objects", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  const node = cm("node-1");
  const emptyNs = cm("node-2", "");
  const slashNs = cm("x", "a/b");
  const plain = cm("x", "a");
  for (const o of [node, emptyNs, slashNs, plain]) idx.add(o);
  // a tombstone whose key cannot be an object's: its own entry, not cluster-scoped "x"
  const odd = new DeletedFinalStateUnknown("/x", {}) as unknown as KubeObject;
  idx.add(odd);
  idx.add(cm("x"));
  assert.equal(idx.size, 6);
  assert.equal(idx.getByKey("node-1"), node);
  assert.equal(idx.getByKey("node-2"), emptyNs);
  assert.equal(idx.getByKey("a/b/x"), slashNs);
  assert.equal(idx.getByKey("a/x"), plain);
  assert.equal(idx.getByKey("/x"), odd);
  assert.equal(idx.getByKey("x")!.metadata.name, "x");
  for (const key of ["", "/", "a/", "b/x", "a/b", "zz"]) {
    assert.equal(idx.getByKey(key), undefined, key);
  }
  // @ts-expect-error: not a string
  assert.equal(idx.getByKey(undefined), undefined);
  assert.deepEqual(sorted(idx.listIndexFuncValues(NAMESPACE_INDEX)), ["", "a", "a/b"]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, ""), ["node-1", "node-2", "/x", "x"]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "a/b"), ["a/b/x"]);
  assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, "a"), [plain]);
  assert.deepEqual(idx.index(NAMESPACE_INDEX, cm("probe", "a/b")), [slashNs]);
  assert.deepEqual(idx.listKeys(), ["node-1", "node-2", "/x", "x", "a/b/x", "a/x"]);
  idx.delete(odd);
  assert.equal(idx.getByKey("/x"), undefined);
  assert.equal(idx.getByKey("x")!.metadata.name, "x");
  // keys are checked as the key function checks them, and a bad object changes nothing
  for (const bad of [{ metadata: {} }, { metadata: { name: "a/b", namespace: "ns" } }, {}]) {
    assert.throws(() => idx.update(bad as KubeObject), KeyError);
    assert.throws(() => idx.delete(bad as KubeObject), KeyError);
    assert.throws(() => idx.get(bad as KubeObject), KeyError);
    assert.equal(idx.unchanged(bad as KubeObject), undefined);
  }
  assert.throws(
    () => idx.update({ metadata: { name: "a", namespace: 3 } } as unknown as KubeObject),
    /metadata.namespace is not a string/,
  );
  assert.equal(idx.size, 5);
});

test("the namespace index served by the layout: under any name, added later, beside other indexes", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, { app: byApp });
  idx.add(cm("a", "one", "web"));
  idx.add(cm("b", "two", "web"));
  idx.addIndexers({ ns: namespaceIndexFunc, [NAMESPACE_INDEX]: namespaceIndexFunc });
  for (const name of ["ns", NAMESPACE_INDEX]) {
    assert.deepEqual(idx.listIndexFuncValues(name), ["one", "two"]);
    assert.deepEqual(idx.indexKeys(name, "two"), ["two/b"]);
  }
  assert.deepEqual(idx.indexKeys("app", "web"), ["one/a", "two/b"]);
  assert.deepEqual(Object.keys(idx.getIndexers()).sort(), ["app", "namespace", "ns"]);
  idx.replace([cm("c", "three", "db"), cm("a", "one", "db")], "2");
  assert.deepEqual(idx.listIndexFuncValues("ns"), ["three", "one"]);
  assert.deepEqual(idx.indexKeys("app", "db"), ["three/c", "one/a"]);
  assert.deepEqual(idx.listIndexFuncValues("app"), ["db"]);
  idx.delete(cm("c", "three"));
  assert.deepEqual(idx.listIndexFuncValues(NAMESPACE_INDEX), ["one"]);
  assert.deepEqual(idx.indexKeys("app", "db"), ["one/a"]);
  // a wrapped namespace index function is an ordinary index
  const other = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    ns: (o) => namespaceIndexFunc(o),
  });
  other.add(cm("a", "one"));
  assert.deepEqual(other.indexKeys("ns", "one"), ["one/a"]);
});

test("unchanged under the namespace/name layout: the held copy when same version and content", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  const held = {
    metadata: { name: "a", namespace: "ns", uid: "u", resourceVersion: "5" },
    data: { k: "v" },
  };
  assert.equal(idx.unchanged(structuredClone(held)), undefined, "empty store");
  idx.add(held);
  assert.equal(idx.unchanged(structuredClone(held)), held);
  assert.equal(idx.unchanged({ ...structuredClone(held), data: { k: "w" } }), undefined);
  const moved = structuredClone(held);
  moved.metadata.namespace = "other";
  assert.equal(idx.unchanged(moved), undefined);
});
