import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { mulberry32 } from "../_fixtures.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer, type Indexers, type IndexFunc } from "../../src/cache/indexer.ts";
import { KeyError } from "../../src/cache/key_error.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../../src/cache/namespace_index.ts";

interface Pod extends KubeObject {
  spec?: { tags?: string[] };
}

function pod(name: string, namespace?: string, app?: string, tags?: string[]): Pod {
  return {
    kind: "Pod",
    metadata: { name, ...(namespace ? { namespace } : {}), ...(app ? { labels: { app } } : {}) },
    ...(tags ? { spec: { tags } } : {}),
  };
}

const byApp: IndexFunc<Pod> = (obj) => {
  const app = obj.metadata.labels?.app;
  return app ? [app] : [];
};
const byTag: IndexFunc<Pod> = (obj) => obj.spec?.tags ?? [];

function newIndexer(extra: Indexers<Pod> = {}): Indexer<Pod> {
  return new Indexer<Pod>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
    app: byApp,
    ...extra,
  });
}

const sorted = (xs: string[]): string[] => [...xs].sort();
const names = (objs: Pod[]): string[] => sorted(objs.map((o) => o.metadata.name!));

test("indexer adds, updates, gets, lists and deletes like a store", () => {
  const store = newIndexer();
  const a = pod("a", "default", "web");
  store.add(a);
  store.add(pod("node-1"));
  assert.equal(store.get(pod("a", "default")), a);
  assert.equal(store.getByKey("default/a"), a);
  assert.deepEqual(store.listKeys(), ["default/a", "node-1"]);
  assert.deepEqual(names(store.list()), ["a", "node-1"]);
  const a2 = pod("a", "default", "db");
  store.update(a2);
  assert.equal(store.getByKey("default/a"), a2);
  assert.equal(store.size, 2);
  store.delete(pod("a", "default"));
  store.delete(pod("absent", "default"));
  assert.deepEqual(store.listKeys(), ["node-1"]);
  store.resync();
  assert.deepEqual(store.listKeys(), ["node-1"]);
});

test("indexer removes stale index values on update", () => {
  const store = newIndexer();
  store.add(pod("a", "default", "web"));
  store.update(pod("a", "default", "db"));
  assert.deepEqual(store.indexKeys("app", "web"), []);
  assert.deepEqual(store.indexKeys("app", "db"), ["default/a"]);
  assert.deepEqual(store.listIndexFuncValues("app"), ["db"]);
  store.update(pod("a", "default"));
  assert.deepEqual(store.listIndexFuncValues("app"), []);
});

test("byIndex after update moves an object between namespaces", () => {
  const store = new Indexer<Pod>((obj) => obj.metadata.uid!, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  store.add({ metadata: { name: "a", namespace: "one", uid: "u1" } });
  store.add({ metadata: { name: "b", namespace: "one", uid: "u2" } });
  store.update({ metadata: { name: "a", namespace: "two", uid: "u1" } });
  assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, "one")), ["b"]);
  assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, "two")), ["a"]);
  assert.equal(store.byIndex(NAMESPACE_INDEX, "two")[0].metadata.namespace, "two");
});

test("indexer leaves no empty index buckets after delete", () => {
  const store = newIndexer();
  store.add(pod("a", "default", "web"));
  store.add(pod("b", "default", "web"));
  store.delete(pod("a", "default"));
  assert.deepEqual(store.listIndexFuncValues("app"), ["web"]);
  store.delete(pod("b", "default"));
  assert.deepEqual(store.listIndexFuncValues("app"), []);
  assert.deepEqual(store.listIndexFuncValues(NAMESPACE_INDEX), []);
  assert.deepEqual(store.byIndex("app", "web"), []);
});

test("indexer rebuilds indices on replace", () => {
  const store = newIndexer();
  store.add(pod("old", "default", "web"));
  store.replace([pod("x", "ns", "db"), pod("y", "ns", "db"), pod("x", "ns", "cache")], "10");
  assert.deepEqual(store.listKeys(), ["ns/x", "ns/y"]);
  assert.deepEqual(sorted(store.listIndexFuncValues("app")), ["cache", "db"]);
  assert.deepEqual(store.indexKeys("app", "db"), ["ns/y"]);
  assert.deepEqual(store.indexKeys("app", "cache"), ["ns/x"]);
  assert.deepEqual(store.listIndexFuncValues(NAMESPACE_INDEX), ["ns"]);
  store.replace([], "11");
  assert.equal(store.size, 0);
  assert.deepEqual(store.listIndexFuncValues("app"), []);
});

test("indexer replace leaves out an item whose key or index function throws, applies the rest, then throws", () => {
  const store = newIndexer({
    strict: (obj) => {
      if (obj.metadata.name === "boom") throw new Error("index function failed");
      return [obj.metadata.name!];
    },
  });
  store.add(pod("keep", "default", "web"));
  assert.throws(() => store.replace([pod("x", "ns", "db"), pod("boom", "ns")], "5"), /failed/);
  assert.deepEqual(
    store.listKeys(),
    ["ns/x"],
    "the list replaced the content, without the bad item",
  );
  assert.deepEqual(store.listIndexFuncValues("strict"), ["x"]);
  assert.throws(
    () => store.replace([pod("y", "ns", "db"), { metadata: {} }, pod("boom", "ns")], "6"),
    (err: unknown) =>
      err instanceof AggregateError && err.errors.length === 2 && err.errors[0] instanceof KeyError,
  );
  assert.deepEqual(store.listKeys(), ["ns/y"]);
  assert.deepEqual(store.listIndexFuncValues("app"), ["db"]);
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/y"]);
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, "default"), []);
});

test("indexer replace is atomic: readers during a replace see only the old content", () => {
  const seen: string[][] = [];
  const store: Indexer<Pod> = newIndexer({
    spy: (obj) => {
      seen.push(store.listKeys().concat(store.listIndexFuncValues(NAMESPACE_INDEX)));
      return [obj.metadata.name!];
    },
  });
  store.add(pod("old", "default"));
  seen.length = 0;
  store.replace([pod("x", "ns"), pod("y", "ns")], "5");
  assert.deepEqual(seen, [["default/old", "default"], ["default/old", "default"]]);
  assert.deepEqual(store.listKeys(), ["ns/x", "ns/y"]);
});

test("indexer update that throws keeps the old object and its index values", () => {
  const store = newIndexer({
    strict: (obj) => {
      if (obj.metadata.labels?.app === "bad") throw new Error("no");
      return [];
    },
  });
  const a = pod("a", "default", "web");
  store.add(a);
  assert.throws(() => store.update(pod("a", "default", "bad")), /no/);
  assert.equal(store.getByKey("default/a"), a);
  assert.deepEqual(store.indexKeys("app", "web"), ["default/a"]);
  assert.deepEqual(store.listIndexFuncValues("app"), ["web"]);
});

test("addIndexers on a populated indexer indexes the existing objects", () => {
  const store = newIndexer();
  store.add(pod("a", "default", "web", ["x", "y"]));
  store.add(pod("b", "default", "db", ["y"]));
  store.addIndexers({ tag: byTag });
  assert.deepEqual(sorted(store.listIndexFuncValues("tag")), ["x", "y"]);
  assert.deepEqual(sorted(store.indexKeys("tag", "y")), ["default/a", "default/b"]);
  store.update(pod("a", "default", "web", ["z"]));
  assert.deepEqual(store.indexKeys("tag", "y"), ["default/b"]);
  assert.deepEqual(store.indexKeys("tag", "x"), []);
  assert.deepEqual(Object.keys(store.getIndexers()).sort(), ["app", "namespace", "tag"]);
});

test("addIndexers rejects a name already in use and changes nothing", () => {
  const store = newIndexer();
  store.add(pod("a", "default", "web"));
  assert.throws(() => store.addIndexers({ tag: byTag, app: byTag }), (err: unknown) => {
    assert.ok(err instanceof TypeError);
    assert.match(err.message, /"app" already exists/);
    return true;
  });
  assert.deepEqual(Object.keys(store.getIndexers()).sort(), ["app", "namespace"]);
  assert.throws(() => store.indexKeys("tag", "x"), TypeError);
});

test("addIndexers leaves the indexer unchanged when a new index function throws", () => {
  const store = newIndexer();
  store.add(pod("a", "default", "web"));
  assert.throws(() => store.addIndexers({ broken: () => ({}) as string[] }), /array of strings/);
  // @ts-expect-error: not a function
  assert.throws(() => store.addIndexers({ nope: 3 }), /"nope" is not a function/);
  // @ts-expect-error: not an object
  assert.throws(() => store.addIndexers(null), TypeError);
  assert.deepEqual(Object.keys(store.getIndexers()).sort(), ["app", "namespace"]);
});

test("an unknown index name throws a TypeError naming it", () => {
  const store = newIndexer();
  const calls = [
    () => store.index("nope", pod("a", "default")),
    () => store.indexKeys("nope", "x"),
    () => store.byIndex("nope", "x"),
    () => store.listIndexFuncValues("nope"),
  ];
  for (const call of calls) assert.throws(call, { name: "TypeError", message: /"nope"/ });
});

test("index returns each object sharing any index value with the given one, once", () => {
  const store = newIndexer({ tag: byTag });
  store.add(pod("a", "ns", undefined, ["x", "y"]));
  store.add(pod("b", "ns", undefined, ["y", "z"]));
  store.add(pod("c", "ns", undefined, ["w"]));
  assert.deepEqual(names(store.index("tag", pod("probe", "ns", undefined, ["x", "y", "z"]))), [
    "a",
    "b",
  ]);
  assert.deepEqual(store.index("tag", pod("probe", "ns")), []);
});

test("indexer indexes duplicate values from an index function once", () => {
  const store = newIndexer({ tag: byTag });
  store.add(pod("a", "ns", undefined, ["x", "x", "y"]));
  assert.deepEqual(store.indexKeys("tag", "x"), ["ns/a"]);
  store.update(pod("a", "ns", undefined, ["y"]));
  assert.deepEqual(store.listIndexFuncValues("tag"), ["y"]);
});

test("indexer rejects an index function result that is not an array of strings", () => {
  const store = newIndexer({
    weird: (obj) => (obj.metadata.name === "a" ? [1] : "x") as unknown as string[],
  });
  assert.throws(() => store.add(pod("a", "ns")), /"weird" must return an array of strings/);
  assert.throws(() => store.add(pod("b", "ns")), TypeError);
  assert.equal(store.size, 0);
});

test("indexer re-indexes an object that was mutated in place before its update", () => {
  const store = newIndexer({ tag: byTag });
  const a = pod("a", "ns", "web", ["x"]);
  store.add(a);
  a.metadata.labels!.app = "db";
  a.spec!.tags!.push("y");
  a.spec!.tags!.shift();
  store.update(a);
  assert.deepEqual(store.listIndexFuncValues("app"), ["db"]);
  assert.deepEqual(store.listIndexFuncValues("tag"), ["y"]);
});

test("getIndexers returns a copy of the index functions", () => {
  const store = newIndexer();
  const indexers = store.getIndexers();
  assert.equal(indexers.app, byApp);
  delete indexers.app;
  assert.equal(store.getIndexers().app, byApp);
});

test("indexer constructor rejects bad arguments", () => {
  // @ts-expect-error: not a function
  assert.throws(() => new Indexer(null), TypeError);
  // @ts-expect-error: not a function
  assert.throws(() => new Indexer(metaNamespaceKeyFunc, { a: "b" }), TypeError);
  assert.equal(new Indexer(metaNamespaceKeyFunc).size, 0);
});

/** The reference index: recomputed from scratch from a plain Map. */
function recompute(model: Map<string, Pod>, indexFunc: IndexFunc<Pod>): Map<string, string[]> {
  const index = new Map<string, Set<string>>();
  for (const [key, obj] of model) {
    for (const value of indexFunc(obj)) {
      if (!index.has(value)) index.set(value, new Set());
      index.get(value)!.add(key);
    }
  }
  return new Map([...index].map(([value, keys]) => [value, sorted([...keys])]));
}

test("indexer matches a recomputed reference model over 2,000 random operations", () => {
  const seed = 20240611;
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
  const NAMESPACES = ["", "ns1", "ns2", "ns3"];
  const APPS = [undefined, "web", "db", "cache"];
  const TAGS = ["x", "y", "z", "w"];
  const byTier: IndexFunc<Pod> = (obj) => [obj.metadata.labels?.app ? "labelled" : "bare"];
  const randomTags = () => Array.from({ length: Math.floor(rand() * 4) }, () => pick(TAGS));
  const randomPod = (name = pick(NAMES), namespace = pick(NAMESPACES)) =>
    pod(name, namespace || undefined, pick(APPS), rand() < 0.8 ? randomTags() : undefined);

  const indexers: Indexers<Pod> = { [NAMESPACE_INDEX]: namespaceIndexFunc, app: byApp, tag: byTag };
  const store = new Indexer<Pod>(metaNamespaceKeyFunc, indexers);
  const model = new Map<string, Pod>();

  for (let step = 0; step < 2000; step++) {
    const where = `seed ${seed}, step ${step}`;
    const existing = [...model.keys()];
    const r = rand();
    let op: string;
    if (step === 1000) {
      op = "addIndexers";
      store.addIndexers({ tier: byTier });
      indexers.tier = byTier;
    } else if (r < 0.3) {
      op = "add";
      const obj = randomPod();
      store.add(obj);
      model.set(metaNamespaceKeyFunc(obj), obj);
    } else if (r < 0.55 && existing.length > 0) {
      op = "update";
      const old = model.get(pick(existing))!;
      const obj = randomPod(old.metadata.name, old.metadata.namespace ?? "");
      store.update(obj);
      model.set(metaNamespaceKeyFunc(obj), obj);
    } else if (r < 0.6 && existing.length > 0) {
      op = "mutate in place, then update";
      const obj = model.get(pick(existing))!;
      obj.metadata.labels = { app: pick(APPS.slice(1)) as string };
      obj.spec = { tags: randomTags() };
      store.update(obj);
    } else if (r < 0.75 && existing.length > 0) {
      op = "delete";
      const key = pick(existing);
      const { name, namespace } = model.get(key)!.metadata;
      store.delete(pod(name!, namespace, "stale", ["stale"]));
      model.delete(key);
    } else if (r < 0.8) {
      op = "delete (maybe absent)";
      const obj = randomPod();
      store.delete(obj);
      model.delete(metaNamespaceKeyFunc(obj));
    } else if (r < 0.83) {
      op = "replace";
      const items = Array.from({ length: Math.floor(rand() * 16) }, () => randomPod());
      store.replace(items, String(step));
      model.clear();
      for (const obj of items) model.set(metaNamespaceKeyFunc(obj), obj);
    } else if (r < 0.85) {
      op = "add without a name (rejected)";
      assert.throws(() => store.add({ metadata: { namespace: "ns1" } }), KeyError, where);
    } else {
      op = "update (maybe absent)";
      const obj = randomPod();
      store.update(obj);
      model.set(metaNamespaceKeyFunc(obj), obj);
    }

    const at = `${where} (${op})`;
    assert.deepEqual(sorted(store.listKeys()), sorted([...model.keys()]), at);
    assert.equal(store.size, model.size, at);
    for (const [key, obj] of model) assert.equal(store.getByKey(key), obj, at);
    for (const [name, indexFunc] of Object.entries(indexers)) {
      const expected = recompute(model, indexFunc);
      assert.deepEqual(sorted(store.listIndexFuncValues(name)), sorted([...expected.keys()]), at);
      for (const [value, keys] of expected) {
        assert.deepEqual(sorted(store.indexKeys(name, value)), keys, `${at}: ${name}=${value}`);
        const objs = store.byIndex(name, value);
        assert.deepEqual(sorted(objs.map(metaNamespaceKeyFunc)), keys, `${at}: ${name}=${value}`);
      }
      const probe = randomPod();
      const want = new Set(indexFunc(probe).flatMap((v) => expected.get(v) ?? []));
      assert.deepEqual(
        sorted(store.index(name, probe).map(metaNamespaceKeyFunc)),
        sorted([...want]),
        at,
      );
    }
  }
});

test("indexer replace with the same object twice under one key indexes it once (a reused copy listed twice)", () => {
  const cm = (name: string, namespace: string, resourceVersion = "1"): KubeObject => ({
    metadata: { name, namespace, resourceVersion },
  });
  let calls = 0;
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: (obj) => {
      calls++;
      return namespaceIndexFunc(obj);
    },
  });
  const objs = Array.from({ length: 1000 }, (_, i) => cm(`cm-${i}`, `ns-${i}`));
  store.replace([...objs, ...objs, objs[0]], "1");
  assert.equal(calls, 1000, "each object indexed once");
  assert.equal(store.size, 1000);
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, "ns-0"), ["ns-0/cm-0"]);
  assert.equal(store.listIndexFuncValues(NAMESPACE_INDEX).length, 1000);
  // a different copy under the same key still moves the key to its values
  store.replace([objs[1], cm("cm-1", "ns-1", "other")], "2");
  assert.deepEqual(store.indexKeys(NAMESPACE_INDEX, "ns-1"), ["ns-1/cm-1"]);
  assert.equal(store.getByKey("ns-1/cm-1")!.metadata.resourceVersion, "other");
});

/** A ConfigMap whose `metadata.namespace` counts its reads. */
function countingNamespace(name: string, namespace: string | undefined, rv: string) {
  const reads = { count: 0 };
  const metadata = { name, resourceVersion: rv } as KubeObject["metadata"];
  Object.defineProperty(metadata, "namespace", {
    enumerable: true,
    get: () => {
      reads.count++;
      return namespace;
    },
  });
  return { obj: { kind: "ConfigMap", metadata } as KubeObject, reads };
}

test("namespace index under namespace/name keys: replacing an object under its key keeps it filed under its namespace, and never reads the stored one", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  for (const ns of ["a", "", undefined]) {
    const first = countingNamespace("x", ns, "1");
    idx.add(first.obj);
    const second = countingNamespace("x", ns, "2");
    first.reads.count = 0;
    idx.update(second.obj);
    // the new one is read to find its place (checked, then used); the stored one not at all
    assert.equal(second.reads.count, 2, `namespace ${ns}`);
    assert.equal(first.reads.count, 0, `namespace ${ns}`);
    const key = ns ? `${ns}/x` : "x";
    assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, ns ?? ""), [key]);
    assert.equal(idx.getByKey(key), second.obj);
  }
  assert.deepEqual(idx.listIndexFuncValues(NAMESPACE_INDEX).sort(), ["", "a"]);
  // another key function, or another index function, is not trusted that way
  const other = new Indexer<KubeObject>((o) => o.metadata.name!, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  const a = countingNamespace("x", "a", "1");
  other.add(a.obj);
  const b = countingNamespace("x", "b", "2"); // same key, another namespace
  other.update(b.obj);
  assert.deepEqual(other.indexKeys(NAMESPACE_INDEX, "a"), []);
  assert.deepEqual(other.indexKeys(NAMESPACE_INDEX, "b"), ["x"]);
});

test("namespace index: a stored tombstone or a stored object whose namespace changed is refiled when an object replaces it under its key", () => {
  const idx = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  // a tombstone has its own key but no metadata: it is filed under its key's namespace
  const tombstone = new DeletedFinalStateUnknown("ns/a", {}) as unknown as KubeObject;
  idx.add(tombstone);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/a"]);
  assert.deepEqual(idx.byIndex(NAMESPACE_INDEX, "ns"), [tombstone]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, ""), []);
  const live = { metadata: { name: "a", namespace: "ns" } } as KubeObject;
  idx.update(live);
  assert.equal(idx.size, 1);
  assert.equal(idx.getByKey("ns/a"), live);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/a"]);
  assert.deepEqual(idx.indexKeys(NAMESPACE_INDEX, ""), []);
  // and a tombstone removes the live object under its key
  idx.delete(tombstone);
  assert.equal(idx.size, 0);
  assert.deepEqual(idx.listIndexFuncValues(NAMESPACE_INDEX), []);
  // a stored object changed in place, then indexed where it now says it is
  const later = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  const o = { metadata: { name: "b", namespace: "ns" } } as KubeObject;
  later.add(o);
  o.metadata.namespace = "other";
  later.addIndexers({ [NAMESPACE_INDEX]: namespaceIndexFunc });
  later.update({ metadata: { name: "b", namespace: "ns" } } as KubeObject);
  assert.deepEqual(later.indexKeys(NAMESPACE_INDEX, "ns"), ["ns/b"]);
  assert.deepEqual(later.indexKeys(NAMESPACE_INDEX, "other"), []);
});
