/**
 * API discovery against real API servers: 1.20 answers only the legacy
 * documents (one per group version), 1.37 the aggregated ones
 * (`APIGroupDiscoveryList`); both resolve kubectl's names alike, and a CRD
 * created after the discovery is found by one refresh.
 */
import assert from "node:assert/strict";
import {
  ApiDiscovery,
  discover,
  type KubeClient,
  resourceListerWatcher,
  ResourceVerbError,
  UnknownResourceError,
} from "../../mod.ts";
import { ManualClock } from "../../testkit.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-discovery";

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com",
    scope: "Namespaced",
    names: {
      plural: "gadgets",
      singular: "gadget",
      kind: "Gadget",
      listKind: "GadgetList",
      shortNames: ["gd"],
    },
    versions: [{
      name: "v1",
      served: true,
      storage: true,
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
};

async function createCrd(admin: KubeClient): Promise<void> {
  await admin.requestJson("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
    method: "POST",
    body: crd,
  });
  // served once a fresh discovery of the server lists it (what a refresh then reads)
  await eventually(
    async () => {
      const fresh = new ApiDiscovery(admin);
      await fresh.refresh();
      return fresh.find("gadgets.example.com") !== undefined;
    },
    "the CRD in discovery",
    60_000,
  );
}

e2eTest(
  "discovery: kubectl's names, scope, verbs and subresources; an unknown name; a CRD created later found by one refresh",
  (release) =>
    withCluster(release, async ({ admin, namespaces, connect }) => {
      await namespaces(ns);
      const { client } = await connect("token");
      // the discovery's client, counting reads of /apis (one per discovery, either form)
      let reads = 0;
      const counting = {
        requestJson: (path: string, options?: Parameters<KubeClient["requestJson"]>[1]) => {
          if (path === "/apis") reads++;
          return client.requestJson(path, options);
        },
      } as KubeClient;
      const clock = new ManualClock(Date.parse("2026-12-06T00:00:00Z"));
      const api = await discover(counting, { clock, refreshIntervalMs: 30_000 });
      // 1.37 answers the aggregated Accept with APIGroupDiscoveryList, 1.20 with the legacy documents
      assert.equal(api.form, release.current ? "aggregated" : "legacy");
      assert.deepEqual(api.failedGroups, []);
      assert.equal(await discover(counting), api);
      assert.equal(reads, 1);

      const rows: Array<[string, string, string]> = [
        ["po", "v1", "pods"],
        ["pod", "v1", "pods"],
        ["Pod", "v1", "pods"],
        ["pods.v1.", "v1", "pods"],
        ["cm", "v1", "configmaps"],
        ["ev", "v1", "events"], // the core group wins over events.k8s.io
        ["deploy", "apps/v1", "deployments"],
        ["Deployment", "apps/v1", "deployments"],
        ["Deployment.apps", "apps/v1", "deployments"],
        ["deployments.apps", "apps/v1", "deployments"],
        ["deployments.v1.apps", "apps/v1", "deployments"],
        ["Deployment.v1.apps", "apps/v1", "deployments"],
        ["leases.coordination.k8s.io", "coordination.k8s.io/v1", "leases"],
        ["no", "v1", "nodes"],
        ["ns", "v1", "namespaces"],
        ["crd", "apiextensions.k8s.io/v1", "customresourcedefinitions"],
      ];
      for (const [name, apiVersion, resource] of rows) {
        const found = await api.resolve(name);
        assert.deepEqual([found.apiVersion, found.resource], [apiVersion, resource], name);
      }
      const deploy = api.find("deploy")!;
      assert.equal(deploy.kind, "Deployment");
      assert.equal(deploy.singular, "deployment");
      assert.equal(deploy.namespaced, true);
      assert.ok(deploy.categories.includes("all"));
      assert.deepEqual([...deploy.subresources].sort(), ["scale", "status"]);
      for (const verb of ["get", "list", "watch", "create", "update", "patch", "delete"]) {
        assert.ok(deploy.verbs.includes(verb), verb);
      }
      assert.equal(api.find("nodes")?.namespaced, false);
      assert.equal(api.find("namespaces")?.namespaced, false);
      assert.ok(api.find("po")?.subresources.includes("log"));

      // verbs: bindings and tokenreviews can only be created
      for (const name of ["bindings", "tokenreviews"]) {
        const found = await api.resolve(name, { verb: "create" });
        assert.deepEqual(found.verbs, ["create"], name);
        await assert.rejects(api.resolve(name, { verb: "watch" }), ResourceVerbError);
        assert.throws(() => resourceListerWatcher(client, found), ResourceVerbError);
      }
      // a resolved resource lists as it is, or spread with a namespace
      const cm = await api.resolve("cm", { verb: "list" });
      await resourceListerWatcher(client, { ...cm, namespace: ns }).list({ limit: 10 });
      assert.throws(
        () => resourceListerWatcher(client, { ...api.find("no")!, namespace: ns }),
        TypeError,
      );

      await assert.rejects(api.resolve("deplyo"), (err) => {
        assert.ok(err instanceof UnknownResourceError);
        assert.deepEqual(err.suggestions.slice(0, 2), ["deploy", "deployments"]);
        return true;
      });

      // a CRD created after the discovery: a miss within the interval reads nothing...
      await createCrd(admin);
      assert.equal(api.find("gadgets"), undefined);
      await assert.rejects(api.resolve("gd"), UnknownResourceError);
      assert.equal(reads, 1);
      // ...and after it, one refresh finds it by each of its names
      await clock.advance(30_000);
      const gadgets = await api.resolve("gd");
      assert.equal(reads, 2);
      assert.deepEqual(
        [gadgets.apiVersion, gadgets.resource, gadgets.singular, gadgets.kind, gadgets.namespaced],
        ["example.com/v1", "gadgets", "gadget", "Gadget", true],
      );
      for (
        const name of [
          "gadgets",
          "gadget",
          "Gadget",
          "gadgets.example.com",
          "Gadget.v1.example.com",
        ]
      ) {
        assert.equal(api.find(name), gadgets, name);
      }
      await resourceListerWatcher(client, { ...gadgets, namespace: ns }).list({ limit: 10 });
    }),
);
