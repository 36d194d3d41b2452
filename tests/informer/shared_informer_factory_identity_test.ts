import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  type InformerResource,
  SharedInformerFactory,
} from "../../src/informer/shared_informer_factory.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { FakeListerWatcher, FAST, obj } from "./_fake_lister_watcher.ts";

function factoryWithFakes() {
  const made: InformerResource[] = [];
  const factory = new SharedInformerFactory({
    listerWatcher: (resource) => {
      made.push(resource);
      return new FakeListerWatcher([obj("a")]);
    },
    defaults: { ...FAST, onError: () => {} },
  });
  return { factory, made };
}

const cms = (more: Partial<InformerResource> = {}): InformerResource => ({
  apiVersion: "v1",
  resource: "configmaps",
  namespace: "team-a",
  ...more,
});

test("factory: equivalent label selectors share one informer", () => {
  const { factory, made } = factoryWithFakes();
  const one = factory.informerFor(cms({ labelSelector: "x=1,y=2" }));
  assert.equal(factory.informerFor(cms({ labelSelector: "y=2,x=1" })), one);
  assert.equal(factory.informerFor(cms({ labelSelector: " y = 2 ,  x==1 " })), one);
  const set = factory.informerFor(cms({ labelSelector: "tier in (a,b),app=web" }));
  assert.equal(factory.informerFor(cms({ labelSelector: "app=web, tier in (b, a, b)" })), set);
  assert.notEqual(set, one);
  assert.equal(made.length, 2);
  assert.equal(made[0].labelSelector, "x=1,y=2", "the lister-watcher gets the normalized selector");
});

test("factory: equivalent field selectors share one informer", () => {
  const { factory, made } = factoryWithFakes();
  const one = factory.informerFor(cms({ fieldSelector: "metadata.name=a,status.phase!=Failed" }));
  assert.equal(
    factory.informerFor(cms({ fieldSelector: "status.phase!=Failed,metadata.name==a" })),
    one,
  );
  assert.notEqual(factory.informerFor(cms({ fieldSelector: "metadata.name=b" })), one);
  assert.equal(made[0].fieldSelector, "metadata.name=a,status.phase!=Failed");
  // an empty selector is no selector
  assert.equal(
    factory.informerFor(cms({ labelSelector: "", fieldSelector: "" })).name,
    "configmaps.team-a",
  );
});

test("factory: default names of selector informers are readable and distinct", () => {
  const { factory } = factoryWithFakes();
  assert.equal(
    factory.informerFor(cms({ labelSelector: "tier in (b,a), app=web" })).name,
    "configmaps.team-a[app=web,tier in (a,b)]",
  );
  assert.equal(
    factory.informerFor({ apiVersion: "v1", resource: "pods", fieldSelector: "spec.nodeName=n1" })
      .name,
    "pods[fields:spec.nodeName=n1]",
  );
  assert.equal(
    factory.informerFor({
      apiVersion: "v1",
      resource: "pods",
      labelSelector: "spec.nodeName=n1",
      metadataOnly: true,
    }).name,
    "pods[spec.nodeName=n1](metadata)",
  );
  assert.equal(
    factory.informerFor({ apiVersion: "v1", resource: "pods", metadataOnly: true }).name,
    "pods(metadata)",
  );
  const names = factory.informers.map((i) => i.name);
  assert.equal(new Set(names).size, names.length);
});

test("factory: an invalid label selector is a TypeError at informerFor", () => {
  const { factory } = factoryWithFakes();
  assert.throws(
    () => factory.informerFor(cms({ labelSelector: "app=(web" })),
    (err: unknown) => err instanceof TypeError && /invalid label selector/.test(err.message),
  );
});

test("factory: a second informerFor with no or identical options returns the same informer", () => {
  const { factory } = factoryWithFakes();
  const transform = (o: KubeObject) => o;
  const byApp = (o: KubeObject) => [o.metadata.labels?.app ?? ""];
  const first = factory.informerFor(cms(), {
    transform,
    indexers: { byApp },
    resyncPeriodMs: 60_000,
    expectedKind: "ConfigMap",
    backoff: { initialMs: 5 },
  });
  assert.equal(factory.informerFor(cms()), first);
  assert.equal(factory.informerFor(cms(), {}), first);
  assert.equal(
    factory.informerFor(cms(), {
      transform,
      indexers: { byApp }, // another object, the same functions
      resyncPeriodMs: 60_000,
      expectedKind: "ConfigMap",
      backoff: { initialMs: 5 },
      useStreamingList: FAST.useStreamingList, // a factory default, restated
      name: "configmaps.team-a",
    }),
    first,
  );
});

test("factory: a second informerFor with conflicting options throws naming the option", () => {
  const { factory } = factoryWithFakes();
  const transform = (o: KubeObject) => o;
  factory.informerFor(cms(), { transform, resyncPeriodMs: 60_000, expectedKind: "ConfigMap" });
  const conflicts: [string, Record<string, unknown>][] = [
    ["transform", { transform: (o: KubeObject) => o }],
    ["indexers", { indexers: { byApp: () => [] } }],
    ["resyncPeriodMs", { resyncPeriodMs: 30_000 }],
    ["expectedKind", { expectedKind: "Secret" }],
    ["name", { name: "mine" }],
    ["backoff", { backoff: { initialMs: 1, capMs: 6, jitter: 0 } }],
  ];
  for (const [option, options] of conflicts) {
    assert.throws(
      () => factory.informerFor(cms(), options),
      (err: unknown) =>
        err instanceof TypeError &&
        err.message.includes(`"configmaps.team-a" already exists with another ${option};`),
      option,
    );
  }
  assert.equal(factory.informers.length, 1);
});
