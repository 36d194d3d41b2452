import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import type { InformerChange } from "../../src/informer/informer_change.ts";
import { InformerStore } from "../../src/informer/informer_store.ts";
import type { Indexers } from "../../src/cache/indexer.ts";

const o = (name: string, rv?: string, ns = "ns"): KubeObject => ({
  metadata: { name, namespace: ns, resourceVersion: rv },
});

function recording() {
  const changes: string[] = [];
  const raw: InformerChange<KubeObject>[] = [];
  const store = new InformerStore<KubeObject>({
    onChange: (c) => {
      raw.push(c);
      if (c.type === "synced") changes.push("synced");
      else if (c.type === "add") changes.push(`add ${c.key}${c.isInInitialList ? " initial" : ""}`);
      else if (c.type === "update") {
        changes.push(c.oldObject === c.object ? `sync ${c.key}` : `update ${c.key}`);
      } else {changes.push(
          `${c.object instanceof DeletedFinalStateUnknown ? "tombstone" : "delete"} ${c.key}`,
        );}
    },
  });
  return { store, changes, raw };
}

test("informer store: the first replace gives initial adds then synced; later ones diff", () => {
  const { store, changes, raw } = recording();
  store.replace([o("a", "1"), o("b", "1"), o("c", "1")], "1");
  assert.equal(store.hasSynced(), true);
  store.replace([o("b", "1"), o("c", "2"), o("d", "2")], "2");
  assert.deepEqual(changes, [
    "add ns/a initial",
    "add ns/b initial",
    "add ns/c initial",
    "synced",
    "update ns/c",
    "add ns/d",
    "tombstone ns/a",
  ]);
  const tomb = raw.at(-1) as { object: DeletedFinalStateUnknown<KubeObject> };
  assert.equal(tomb.object.obj.metadata.name, "a");
  assert.deepEqual(store.listKeys(), ["ns/b", "ns/c", "ns/d"]);
});

test("informer store: update of a new key is an add, of a known key an update, unless the version is the same", () => {
  const { store, changes } = recording();
  store.update(o("a", "1"));
  store.add(o("a", "2"));
  store.update(o("a", "2")); // a replayed event
  store.update(o("b")); // no version: always an update
  store.update(o("b"));
  assert.deepEqual(changes, ["add ns/a", "update ns/a", "add ns/b", "update ns/b"]);
});

test("informer store: delete announces the final state; an unknown key announces nothing", () => {
  const { store, changes, raw } = recording();
  store.update(o("a", "1"));
  store.delete(o("zz", "2"));
  store.delete(o("a", "3"));
  assert.deepEqual(changes, ["add ns/a", "delete ns/a"]);
  assert.equal((raw[1] as { object: KubeObject }).object.metadata.resourceVersion, "3");
  assert.equal(store.size, 0);
});

test("informer store: resync announces update(obj, obj) for every object", () => {
  const { store, changes } = recording();
  store.replace([o("a", "1"), o("b", "1")], "1");
  store.resync();
  assert.deepEqual(changes.slice(3), ["sync ns/a", "sync ns/b"]);
});

test("informer store: bad items of a list are skipped, the rest applies, then the error is thrown", () => {
  const store = new InformerStore<KubeObject>({
    transform: (x) => {
      if (x.metadata.name === "bad") throw new Error("nope");
      return x;
    },
  });
  store.replace([o("a", "1")], "1");
  assert.throws(
    () => store.replace([o("a", "2"), o("bad", "2"), { metadata: {} } as KubeObject], "2"),
    AggregateError,
  );
  assert.deepEqual(store.listKeys(), ["ns/a"]);
  assert.equal(store.getByKey("ns/a")?.metadata.resourceVersion, "2");
  assert.throws(() => store.update(o("bad", "3")), /nope/);
  assert.deepEqual(store.listKeys(), ["ns/a"]);
});

test("informer store: a transform failing on a known object keeps its previous state", () => {
  let fail = false;
  const store = new InformerStore<KubeObject>({
    transform: (x) => {
      if (fail) throw new Error("nope");
      return x;
    },
  });
  store.replace([o("a", "1")], "1");
  fail = true;
  assert.throws(() => store.replace([o("a", "2")], "2"), /nope/);
  assert.equal(store.getByKey("ns/a")?.metadata.resourceVersion, "1");
});

test("informer store: reads and indices work as an Indexer", () => {
  const store = new InformerStore<KubeObject>();
  store.replace([o("a", "1", "x"), o("b", "1", "y")], "1");
  assert.deepEqual(store.byIndex("namespace", "x").map((x) => x.metadata.name), ["a"]);
  assert.deepEqual(store.indexKeys("namespace", "y"), ["y/b"]);
  assert.deepEqual(store.listIndexFuncValues("namespace").sort(), ["x", "y"]);
  store.addIndexers({ name: (x) => [x.metadata.name!] });
  assert.deepEqual(store.index("name", o("b")).map((x) => x.metadata.namespace), ["y"]);
  assert.deepEqual(Object.keys(store.getIndexers()).sort(), ["name", "namespace"]);
  assert.equal(store.get(o("a", undefined, "x"))?.metadata.name, "a");
  assert.equal(store.list().length, 2);
  assert.throws(() => new InformerStore({ onChange: 1 as never }), TypeError);
});

test("informer store: an index function throwing on one listed object leaves out only that object", () => {
  const changes: string[] = [];
  const store = new InformerStore<KubeObject>({
    indexers: {
      node: (x) => {
        const node = (x as { spec?: { node?: string } }).spec?.node;
        if (node === undefined) throw new Error("no spec.node");
        return [node.toLowerCase()];
      },
    },
    onChange: (c) => changes.push(c.type === "synced" ? "synced" : `${c.type} ${c.key}`),
  });
  const good = {
    metadata: { name: "good", namespace: "ns", resourceVersion: "1" },
    spec: { node: "N1" },
  };
  const bad = { metadata: { name: "bad", namespace: "ns", resourceVersion: "1" } };
  assert.throws(() => store.replace([good, bad], "1"), /no spec.node/);
  assert.ok(store.hasSynced(), "the list was applied");
  assert.deepEqual(store.listKeys(), ["ns/good"]);
  assert.deepEqual(store.byIndex("node", "n1").map((x) => x.metadata.name), ["good"]);
  assert.deepEqual(changes, ["add ns/good", "synced"], "handlers hear only what the cache holds");
  // a later list without the good object tombstones it, even with the bad one still there
  assert.throws(() => store.replace([bad], "2"), /no spec.node/);
  assert.deepEqual(store.listKeys(), []);
  assert.deepEqual(changes.slice(2), ["delete ns/good"]);
});

test("informer store: at the same resourceVersion only a provable content change is announced (class instances, Dates and deep values are not compared)", () => {
  class Spec {
    constructor(public replicas: number) {}
  }
  let deep: unknown = 1;
  for (let i = 0; i < 300; i++) deep = { a: deep };
  const meta = (name: string) => ({
    name,
    namespace: "ns",
    uid: `u-${name}`,
    resourceVersion: "5",
  });
  const items = (x: string) =>
    [
      { metadata: meta("cls"), spec: new Spec(1) },
      { metadata: { ...meta("date"), creationTimestamp: new Date(0) } },
      { metadata: meta("deep"), spec: structuredClone(deep) },
      { metadata: meta("plain"), data: { x } },
      { metadata: meta("date-and-data"), t: new Date(0), data: { x } },
    ] as unknown as KubeObject[];
  const { store, changes } = recording();
  store.replace(items("1"), "5");
  changes.length = 0;
  store.replace(items("1"), "5"); // a relist of new copies, nothing changed
  for (const obj of items("1")) store.update(obj); // replayed events
  assert.deepEqual(changes, []);
  store.replace(items("2"), "5"); // served changed at the same version
  assert.deepEqual(changes, ["update ns/plain", "update ns/date-and-data"]);
});

test("an event computes the object's key once (the store hands it to its indexer), with or without indexes", () => {
  const byName = (x: KubeObject) => [x.metadata.name!];
  for (const indexers of [{}, { byName }] as Indexers<KubeObject>[]) {
    let keys = 0;
    const changes: string[] = [];
    const store = new InformerStore<KubeObject>({
      onChange: (c) => void changes.push(c.type === "synced" ? c.type : `${c.type} ${c.key}`),
      keyFunc: (x) => (keys++, `${x.metadata.namespace}/${x.metadata.name}`),
      indexers,
    });
    store.update(o("a", "1"));
    store.update(o("a", "2"));
    assert.equal(keys, 2, "one key per event");
    assert.deepEqual(changes, ["add ns/a", "update ns/a"]);
    assert.equal(store.getByKey("ns/a")?.metadata.resourceVersion, "2");
    if ("byName" in indexers) assert.deepEqual(store.byIndex("byName", "a").length, 1);
  }
});
