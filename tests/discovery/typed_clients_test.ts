/**
 * resourceListerWatcher, resourceClient and SharedInformerFactory.informerFor
 * take an ApiResource from discovery as it is, and check its scope and verbs.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  discover,
  KubeClient,
  resourceClient,
  resourceListerWatcher,
  ResourceVerbError,
  SharedInformerFactory,
} from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { BINDINGS, NODES } from "./_resources.ts";

test("an ApiResource is a reference: resourceClient, resourceListerWatcher and informerFor take it", async () => {
  const server = await FakeApiServer.start({
    streamingList: true,
    resources: [{
      group: "",
      version: "v1",
      resource: "bindings",
      kind: "Binding",
      namespaced: true,
      verbs: ["create"],
    }],
  });
  try {
    const client = new KubeClient({ server: server.url });
    const api = await discover(client);
    const deploy = await api.resolve("deploy");
    const ns = await api.resolve("ns");
    // cluster-scoped, no namespace: fine
    await resourceClient(client, ns).create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "prod" },
    });
    // spread to add a namespace
    const deployments = resourceClient(client, { ...deploy, namespace: "prod" });
    await deployments.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web" },
    });
    const lw = resourceListerWatcher(client, deploy);
    const list = await lw.list({ resourceVersion: "0", limit: 500 });
    assert.deepEqual(list.items.map((d) => d.metadata.name), ["web"]);
    assert.equal((await lw.identity!({})).resource, "deployments");

    const factory = new SharedInformerFactory({ client });
    const informer = factory.informerFor(deploy);
    assert.equal(informer.name, "deployments");
    assert.equal(factory.informerFor({ ...deploy }), informer); // the same informer
    const inProd = factory.informerFor({ ...deploy, namespace: "prod", labelSelector: "" });
    assert.equal(inProd.name, "deployments.prod");
    const ac = new AbortController();
    const done = factory.start({ signal: ac.signal });
    const sync = await factory.waitForCacheSyncResult(AbortSignal.timeout(10_000));
    assert.ok(sync.synced, sync.message);
    assert.deepEqual(informer.lister().list().map((d) => d.metadata.name), ["web"]);
    ac.abort();
    await done;

    // a resource that cannot be listed or watched is refused before any request
    const bindings = await api.resolve("bindings");
    const seen = server.requestCount;
    assert.throws(() => resourceListerWatcher(client, bindings), (err) => {
      assert.ok(err instanceof ResourceVerbError);
      assert.equal(err.verb, "list");
      assert.equal(err.resource.resource, "bindings");
      return true;
    });
    assert.throws(
      () => new SharedInformerFactory({ client }).informerFor(bindings),
      ResourceVerbError,
    );
    assert.equal(server.requestCount, seen);
    resourceClient(client, bindings); // creating is what bindings serve
  } finally {
    await server.close();
  }
});

test("a namespace on a cluster-scoped ApiResource is a TypeError; plain references stay unchecked", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  const nodesInNs = { ...NODES, namespace: "prod" };
  assert.throws(
    () => resourceListerWatcher(client, nodesInNs),
    /resourceListerWatcher: nodes is cluster-scoped: it has no namespace "prod"/,
  );
  assert.throws(() => resourceClient(client, nodesInNs), /resourceClient: nodes is cluster-scoped/);
  assert.throws(
    () => new SharedInformerFactory({ client }).informerFor(nodesInNs),
    /SharedInformerFactory.informerFor: nodes is cluster-scoped/,
  );
  // watch lacking: refused too
  const noWatch = { ...NODES, verbs: ["get", "list"] };
  assert.throws(() => resourceListerWatcher(client, noWatch), (err) => {
    assert.ok(err instanceof ResourceVerbError);
    assert.equal(err.verb, "watch");
    return true;
  });
  assert.throws(
    () => resourceListerWatcher(client, { ...BINDINGS, namespace: "x" }),
    ResourceVerbError,
  );
  // a plain reference (no discovery fields) is not judged on scope or verbs
  resourceListerWatcher(client, { apiVersion: "v1", resource: "nodes", namespace: "prod" });
  resourceClient(client, { apiVersion: "v1", resource: "nodes", namespace: "prod" });
  new SharedInformerFactory({ client }).informerFor({ apiVersion: "v1", resource: "bindings" });
  resourceListerWatcher(client, NODES);
});
