// Typed objects from the two usual sources of Kubernetes types, through
// every generic of the library: the `kubernetes-types` interfaces (types
// only) and `@kubernetes/client-node`'s model classes. Each test runs for
// real against the test API server, and the file is type-checked (deno test,
// the npm build's tsc): `KubeObjectLike` is what makes it compile, and the
// `@ts-expect-error` lines pin what must still be refused.
import assert from "node:assert/strict";
import type { V1ConfigMap, V1Deployment, V1Pod } from "@kubernetes/client-node";
import type { Deployment } from "kubernetes-types/apps/v1";
import type { ConfigMap, Pod } from "kubernetes-types/core/v1";
import { test } from "../_test.ts";
import {
  catchUp,
  Controller,
  controllerSource,
  DeletedFinalStateUnknown,
  deletionHandlingMetaNamespaceKeyFunc,
  dropManagedFields,
  Indexer,
  Informer,
  InformerStore,
  KubeClient,
  type KubeList,
  type KubeObject,
  type KubeObjectLike,
  type Lister,
  metaNamespaceKeyFunc,
  namespaceIndexFunc,
  newNamespaceKeyedIndexerAndReflector,
  type ObjectMetaLike,
  Reflector,
  resourceClient,
  type ResourceEventHandler,
  resourceListerWatcher,
  SharedInformerFactory,
  watcher,
  type WatchEvent,
} from "../../mod.ts";
import { loadCheckpoint, memoryCheckpointStorage, saveCheckpoint } from "../../checkpoint.ts";
import { FakeApiServer } from "../../testkit.ts";

/** `true` only when `A` and `B` are the same type (not merely assignable). */
type Equals<A, B> = (<X>() => X extends A ? 1 : 2) extends (<X>() => X extends B ? 1 : 2) ? true
  : false;

const DEPLOYMENTS = { apiVersion: "apps/v1", resource: "deployments" } as const;
const PODS = { apiVersion: "v1", resource: "pods" } as const;

function deployment(name: string, replicas: number): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "default", labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [] } },
    },
  };
}

function pod(name: string, owner: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: owner, uid: "u" }],
    },
    spec: { containers: [{ name: "main", image: "nginx" }] },
  };
}

async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test("kubernetes-types Deployments and Pods type every generic and sync with their spec", async () => {
  const server = await FakeApiServer.start();
  server.create(deployment("web", 3));
  server.create(pod("web-1", "web"));
  const client = new KubeClient({ server: server.url });
  const factory = new SharedInformerFactory({ client, defaults: { onError: () => {} } });
  const deployments = factory.informerFor<Deployment>(DEPLOYMENTS);
  const pods = factory.informerFor<Pod>(PODS);
  const updates: [number | undefined, number | undefined][] = [];
  const handler: ResourceEventHandler<Deployment> = {
    onUpdate: (old, next) => {
      updates.push([old.spec?.replicas, next.spec?.replicas]);
    },
  };
  deployments.addEventHandler(handler);
  const reconciled: string[] = [];
  const ac = new AbortController();
  const controller = new Controller({
    name: "typed",
    informers: [
      deployments,
      // A source of Pods mapped to their owning Deployment's key (`p` inferred as a Pod).
      controllerSource(pods, (p) => {
        const same: Equals<typeof p, Pod> = true;
        return same
          ? p.metadata?.ownerReferences?.map((o) => `${p.metadata?.namespace}/${o.name}`)
          : [];
      }),
    ],
    reconcile: (key) => {
      reconciled.push(key);
    },
  });
  const started = factory.start({ signal: ac.signal });
  const controlling = controller.run({ signal: ac.signal });
  try {
    assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(5000)), true);
    const lister: Lister<Deployment> = deployments.lister();
    const web = lister.get("default", "web");
    const sameGet: Equals<typeof web, Deployment | undefined> = true;
    const replicas = web?.spec?.replicas;
    const sameReplicas: Equals<typeof replicas, number | undefined> = true;
    assert.ok(sameGet && sameReplicas);
    assert.equal(replicas, 3);
    assert.deepEqual(
      lister.list({ namespace: "default", labelSelector: "app=web" }).map((d) =>
        d.spec?.template.spec?.containers.length
      ),
      [0],
    );
    const [running] = pods.lister().list();
    assert.equal(running.spec?.containers[0].image, "nginx");

    const api = resourceClient<Deployment>(client, { ...DEPLOYMENTS, namespace: "default" });
    const read: Deployment = await api.get("web");
    assert.equal(read.spec?.replicas, 3);
    const patched = await api.patch("web", { spec: { replicas: 5 } });
    assert.equal(patched.spec?.replicas, 5);
    const list: KubeList<Deployment> = await api.list();
    assert.deepEqual(list.items.map((d) => d.metadata?.name), ["web"]);
    await api.create(deployment("api", 1));
    const applied = await api.apply(deployment("api", 2), { fieldManager: "types-test" });
    assert.equal(applied.spec?.replicas, 2);
    // An apply configuration states only its fields: no selector or template needed.
    const scaled = await api.apply({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "api" },
      spec: { replicas: 4 },
    }, { fieldManager: "types-test" });
    assert.equal(scaled.spec?.replicas, 4);
    assert.equal(scaled.spec?.selector.matchLabels?.app, "api", "the other fields are kept");

    await until(() => lister.get("default", "web")?.spec?.replicas === 5, "the patch");
    assert.deepEqual(updates[0], [3, 5]);
    await until(() => reconciled.includes("default/api"), "the created deployment's reconcile");
    assert.ok(reconciled.includes("default/web"));
  } finally {
    ac.abort();
    await Promise.all([started, controlling]);
    await server.close();
  }
});

test("client-node models type every generic; their Date timestamps are strings at run time", async () => {
  const server = await FakeApiServer.start();
  const client = new KubeClient({ server: server.url });
  const configMaps = resourceClient<V1ConfigMap>(client, {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: "default",
  });
  const made: V1ConfigMap = await configMaps.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings" },
    data: { mode: "a" },
  });
  // Typed `Date` by client-node, but the library keeps the JSON as sent.
  const created: Date | undefined = made.metadata?.creationTimestamp;
  assert.equal(typeof created, "string");
  server.create(
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: { replicas: 2, selector: {}, template: {} },
    } satisfies V1Deployment,
  );
  server.create(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", namespace: "default" },
      spec: { containers: [] },
    } satisfies V1Pod,
  );

  const ac = new AbortController();
  const deployments = new Informer<V1Deployment>(
    resourceListerWatcher<V1Deployment>(client, DEPLOYMENTS),
    { name: "deployments", transform: dropManagedFields, onError: () => {} },
  );
  const podLw = resourceListerWatcher<V1Pod>(client, PODS);
  const podStore = new Indexer<V1Pod>(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
  const pods = new Reflector<V1Pod>(podLw, podStore, { name: "pods", onError: () => {} });
  const { indexer, reflector } = newNamespaceKeyedIndexerAndReflector<V1ConfigMap>(
    resourceListerWatcher<V1ConfigMap>(client, { apiVersion: "v1", resource: "configmaps" }),
    { onError: () => {} },
  );
  const running = [
    deployments.run({ signal: ac.signal }),
    pods.run({ signal: ac.signal }),
    reflector.run({ signal: ac.signal }),
  ];
  try {
    await Promise.all([
      deployments.waitForSync({ signal: AbortSignal.timeout(5000) }),
      pods.synced,
      reflector.synced,
    ]);
    const web: V1Deployment | undefined = deployments.lister().get("default", "web");
    const replicas = web?.spec?.replicas;
    const same: Equals<typeof replicas, number | undefined> = true;
    assert.ok(same);
    assert.equal(replicas, 2);
    assert.deepEqual(podStore.byIndex("namespace", "default").map((p) => p.metadata?.name), ["p"]);
    const [settings] = indexer.list();
    assert.equal(settings.data?.mode, "a");

    for await (
      const event of watcher<V1ConfigMap>(configMapsLw(client), {
        signal: ac.signal,
      })
    ) {
      assert.equal(event.type, "LIST");
      if (event.type === "LIST") {
        const data: { [key: string]: string } | undefined = event.items[0].data;
        assert.deepEqual(data, { mode: "a" });
      }
      break;
    }

    const storage = memoryCheckpointStorage();
    const identity = { server: server.url, ...DEPLOYMENTS };
    await saveCheckpoint<V1Deployment>(storage, "deployments", {
      identity,
      resourceVersion: deployments.lastSyncResourceVersion,
      items: deployments.lister().list(),
    });
    const loaded = await loadCheckpoint<V1Deployment>(storage, "deployments", identity);
    assert.equal(loaded?.items[0].spec?.replicas, 2);
    const caught = await catchUp<V1Deployment>(
      resourceListerWatcher<V1Deployment>(client, DEPLOYMENTS),
      { storage, key: "deployments", signal: AbortSignal.timeout(5000) },
    );
    assert.equal(caught.objects.get("default/web")?.spec?.replicas, 2);
  } finally {
    ac.abort();
    await Promise.all(running);
    await server.close();
  }
});

function configMapsLw(client: KubeClient) {
  return resourceListerWatcher<V1ConfigMap>(client, { apiVersion: "v1", resource: "configmaps" });
}

test("KubeObjectLike accepts both type sources, refuses what is not an object, and KubeObject stays the default", () => {
  const accepts: [
    Equals<V1Pod extends KubeObjectLike ? true : false, true>,
    Equals<Deployment extends KubeObjectLike ? true : false, true>,
    Equals<ConfigMap extends KubeObjectLike ? true : false, true>,
    Equals<V1Deployment["metadata"] extends ObjectMetaLike | undefined ? true : false, true>,
    Equals<KubeObject extends KubeObjectLike ? true : false, true>,
  ] = [true, true, true, true, true];
  assert.deepEqual(accepts, [true, true, true, true, true]);

  const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:1" }), PODS);
  // Without a type argument, objects are the untyped KubeObject, metadata required.
  const untyped = new Informer(lw, { name: "pods" });
  const sameDefault: Equals<ReturnType<typeof untyped.lister>, Lister<KubeObject>> = true;
  const name: string | undefined = untyped.lister().list()[0]?.metadata.name;
  assert.ok(sameDefault && name === undefined);
  const event = { type: "ADDED", object: { metadata: { name: "x" } } } as WatchEvent;
  assert.equal(event.type === "ADDED" && event.object.metadata.name, "x");

  // Code written for the untyped default keeps compiling: an annotated keyOf, an unannotated
  // map, and an unannotated keyOf whose parameter is the untyped KubeObject (metadata required).
  const compat = new Controller({
    name: "compat",
    informers: [untyped, { informer: untyped, map: (o) => o.metadata.name }],
    keyOf: (o: KubeObject | DeletedFinalStateUnknown<KubeObject>) => metaNamespaceKeyFunc(o),
    reconcile: () => {},
  });
  assert.equal(compat.name, "compat");
  const unannotated = new Controller({
    name: "unannotated",
    informers: [untyped],
    keyOf: (o) => o instanceof DeletedFinalStateUnknown ? o.key : o.metadata.name!,
    reconcile: () => {},
  });
  assert.equal(unannotated.name, "unannotated");
  // controllerSource ties map's parameter to the informer's type.
  const pods = new Informer<Pod>(
    resourceListerWatcher<Pod>(new KubeClient({ server: "http://127.0.0.1:1" }), PODS),
    {
      name: "typed-pods",
    },
  );
  // @ts-expect-error a map for Deployments does not fit a source of Pods
  controllerSource(pods, (d: Deployment) => d.spec?.template.metadata?.name);
  assert.throws(() => controllerSource({} as typeof pods), TypeError);
  const indexer: Indexer<KubeObject> = new Indexer(metaNamespaceKeyFunc);
  assert.deepEqual(indexer.list(), []);

  // Key functions take the typed objects and their tombstones.
  const keyed = { metadata: { name: "a", namespace: "ns" } } satisfies V1Pod;
  assert.equal(metaNamespaceKeyFunc(keyed), "ns/a");
  assert.equal(
    deletionHandlingMetaNamespaceKeyFunc(new DeletedFinalStateUnknown<Pod>("ns/b", keyed)),
    "ns/b",
  );
  assert.deepEqual(namespaceIndexFunc(keyed), ["ns"]);
  const store = new InformerStore<Pod>();
  store.add(keyed);
  assert.equal(store.get(keyed)?.metadata?.name, "a");

  // @ts-expect-error a string is not a Kubernetes object
  resourceClient<string>(new KubeClient({ server: "http://127.0.0.1:1" }), PODS);
  // @ts-expect-error an object sharing no field with a Kubernetes object
  new Indexer<{ spec: { replicas: number } }>(() => "k");
  // @ts-expect-error metadata.name must be a string
  new Indexer<{ metadata: { name: number } }>(() => "k");
  // @ts-expect-error labels are strings
  new Indexer<{ metadata: { labels: Record<string, number> } }>(() => "k");
  const deployments = resourceClient<Deployment>(
    new KubeClient({ server: "http://127.0.0.1:1" }),
    DEPLOYMENTS,
  );
  const replicas = "2";
  const badApply = {
    apiVersion: "apps/v1" as const,
    kind: "Deployment" as const,
    metadata: { name: "a" },
    spec: { replicas },
  };
  const typeOnly = () =>
    // @ts-expect-error the fields of an apply configuration keep their types
    deployments.apply(badApply, { fieldManager: "m" });
  assert.equal(typeof typeOnly, "function"); // type-checked, never called
});
