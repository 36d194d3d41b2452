// A consumer on Node that types its objects with the two usual packages of Kubernetes types:
// the `kubernetes-types` interfaces and `@kubernetes/client-node`'s model classes (strict,
// skipLibCheck false; scripts/check_consumer_types.mjs). Every generic of the library must
// take them (`KubeObjectLike`), and what comes back must keep their types (not `any`).
import type { V1ConfigMap, V1Deployment, V1Pod } from "@kubernetes/client-node";
// kubernetes-types has no `exports` map: under `nodenext` its paths take the `.js` of ESM.
import type { Deployment } from "kubernetes-types/apps/v1.js";
import type { Pod } from "kubernetes-types/core/v1.js";
import {
  Controller,
  type ControllerSource,
  controllerSource,
  Indexer,
  Informer,
  KubeClient,
  type KubeObjectLike,
  type Lister,
  metaNamespaceKeyFunc,
  namespaceIndexFunc,
  Reflector,
  resourceClient,
  resourceListerWatcher,
  SharedInformerFactory,
  watcher,
} from "kube-reflector";
import { FakeApiServer } from "kube-reflector/testkit";

export async function typed(): Promise<number | undefined> {
  const server = await FakeApiServer.start();
  const client = new KubeClient({ server: server.url });
  const factory = new SharedInformerFactory({ client });

  // kubernetes-types: interfaces, types only.
  const deployments = factory.informerFor<Deployment>({
    apiVersion: "apps/v1",
    resource: "deployments",
  });
  const pods = factory.informerFor<Pod>({ apiVersion: "v1", resource: "pods" });
  const lister: Lister<Deployment> = deployments.lister();
  const replicas: number | undefined = lister.get("default", "web")?.spec?.replicas;
  // @ts-expect-error replicas is a number (fails if the types became `any`)
  const wrong: string | undefined = lister.get("default", "web")?.spec?.replicas;
  void wrong;
  const podSource: ControllerSource<Pod> = {
    informer: pods,
    map: (pod) => pod.metadata?.ownerReferences?.map((o) => `${pod.metadata?.namespace}/${o.name}`),
  };
  // controllerSource infers `pod` as a Pod.
  const inferred = controllerSource(pods, (pod) => pod.spec?.nodeName);
  const controller = new Controller({
    name: "typed",
    informers: [deployments, podSource, inferred],
    reconcile: async (key, { signal }) => {
      const { spec } = await resourceClient<Deployment>(client, {
        apiVersion: "apps/v1",
        resource: "deployments",
        namespace: "default",
      }).get(key.split("/")[1], { signal });
      void spec?.template.spec?.containers[0].image;
      // A server-side apply configuration names only the fields it owns.
      await resourceClient<Deployment>(client, {
        apiVersion: "apps/v1",
        resource: "deployments",
        namespace: "default",
      }).apply({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web" },
        spec: { replicas: 2 },
      }, {
        fieldManager: "typed",
        signal,
      });
    },
  });
  void controller;

  // @kubernetes/client-node: model classes (metadata optional, Date timestamps).
  const lw = resourceListerWatcher<V1Pod>(client, { apiVersion: "v1", resource: "pods" });
  const store = new Indexer<V1Pod>(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
  const reflector = new Reflector(lw, store, { name: "pods" });
  const nodes: (string | undefined)[] = store.list().map((p) => p.spec?.nodeName);
  const informer = new Informer<V1Deployment>(
    resourceListerWatcher<V1Deployment>(client, { apiVersion: "apps/v1", resource: "deployments" }),
    { name: "deployments" },
  );
  const configMaps = resourceClient<V1ConfigMap>(client, {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: "default",
  });
  const made = await configMaps.apply(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: { k: "v" } },
    { fieldManager: "me" },
  );
  const data: { [key: string]: string } | undefined = made.data;
  const ac = new AbortController();
  for await (
    const event of watcher<V1ConfigMap>(
      resourceListerWatcher<V1ConfigMap>(client, { apiVersion: "v1", resource: "configmaps" }),
      { signal: ac.signal },
    )
  ) {
    if (event.type === "ADDED") nodes.push(event.object.data?.k);
    break;
  }
  const objects: KubeObjectLike[] = [...informer.lister().list(), ...store.list()];
  void [reflector, data, objects];
  await server.close();
  return replicas;
}
