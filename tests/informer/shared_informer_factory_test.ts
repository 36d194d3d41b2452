import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import type { InformerResource } from "../../src/informer/shared_informer_factory.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { FakeListerWatcher, FAST, obj, until } from "./_fake_lister_watcher.ts";
import { Recorder } from "./_recorder.ts";

function factoryWithFakes() {
  const made: { resource: InformerResource; lw: FakeListerWatcher }[] = [];
  const factory = new SharedInformerFactory({
    listerWatcher: (resource) => {
      const lw = new FakeListerWatcher([obj(`${resource.resource}-1`)]);
      made.push({ resource, lw });
      return lw;
    },
    defaults: { ...FAST, onError: () => {} },
  });
  return { factory, made };
}

test("factory shares one informer per resource, namespace and selectors", () => {
  const { factory, made } = factoryWithFakes();
  const pods = factory.informerFor({ apiVersion: "v1", resource: "pods" });
  assert.equal(factory.informerFor({ apiVersion: "v1", resource: "pods" }), pods);
  const inNs = factory.informerFor({
    apiVersion: "v1",
    resource: "pods",
    namespace: "kube-system",
  });
  const selected = factory.informerFor({
    apiVersion: "v1",
    resource: "pods",
    labelSelector: "app=web",
  });
  assert.notEqual(inNs, pods);
  assert.notEqual(selected, pods);
  assert.equal(made.length, 3, "one ListerWatcher per distinct key so far");
  assert.equal(pods.name, "pods");
  assert.equal(inNs.name, "pods.kube-system");
  assert.equal(selected.name, "pods[app=web]", "a selector variant gets its own readable name");
  const other = factory.informerFor({
    apiVersion: "v1",
    resource: "pods",
    labelSelector: "app=db",
  });
  assert.notEqual(other.name, selected.name);
  assert.equal(
    factory.informerFor({ apiVersion: "apps/v1", resource: "deployments" }, { name: "deploys" })
      .name,
    "deploys",
  );
  assert.equal(factory.informers.length, 5);
});

test("factory start runs every informer, also those asked for later, until the signal aborts", async () => {
  const { factory, made } = factoryWithFakes();
  const pods = factory.informerFor({ apiVersion: "v1", resource: "pods" });
  const rec = new Recorder();
  pods.addEventHandler(rec);
  const ac = new AbortController();
  const done = factory.start({ signal: ac.signal });
  try {
    assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(3000)), true);
    const later = factory.informerFor({ apiVersion: "v1", resource: "nodes" });
    await later.waitForSync({ signal: AbortSignal.timeout(3000) });
    assert.deepEqual(later.lister().list().map((o) => o.metadata.name), ["nodes-1"]);
    await until(() => rec.events.length === 1, "the pod add");
    assert.equal(made.length, 2);
    assert.equal(factory.start({ signal: ac.signal }), done, "starting again is harmless");
  } finally {
    ac.abort();
    await done;
  }
  assert.equal(made.every(({ lw }) => lw.liveWatches === 0), true, "every watch ended");
});

test("factory validates its options", () => {
  assert.throws(() => new SharedInformerFactory({}), TypeError);
  assert.throws(() => new SharedInformerFactory({ listerWatcher: 1 as never }), TypeError);
  const factory = new SharedInformerFactory({
    client: new KubeClient({ server: "http://127.0.0.1:1" }),
  });
  assert.throws(() => factory.informerFor({ apiVersion: "", resource: "pods" }), TypeError);
  assert.equal(factory.informerFor({ apiVersion: "v1", resource: "pods" }).name, "pods");
});
