/**
 * The fake API server's discovery documents: the legacy forms of 1.20 and,
 * when asked by the Accept header, the aggregated form of 1.30+.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { FakeApiServer, type FakeApiServerOptions } from "../../testkit.ts";

const V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
const V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
const KUBECTL = `${V2},${V2BETA1},application/json`;
const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

async function withServer(
  options: FakeApiServerOptions,
  fn: (
    server: FakeApiServer,
    get: (path: string, accept?: string) => Promise<Response>,
  ) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start(options);
  try {
    await fn(
      server,
      (path, accept) => fetch(`${server.url}${path}`, { headers: accept ? { accept } : {} }),
    );
  } finally {
    await server.close();
  }
}

test("FakeApiServer serves the legacy discovery documents of every resource, added ones too", async () => {
  await withServer({}, async (server, get) => {
    server.addResource({
      group: "example.com",
      version: "v1",
      resource: "widgets",
      kind: "Widget",
      namespaced: false,
      singular: "wdgt",
      shortNames: ["wd"],
      categories: ["all"],
      verbs: ["get", "list"],
    });
    server.addResource({
      group: "example.com",
      version: "v2",
      resource: "widgets",
      kind: "Widget",
      namespaced: false,
    });
    const api = await get("/api");
    assert.equal(api.headers.get("content-type"), "application/json");
    const versions = await api.json();
    assert.equal(versions.kind, "APIVersions");
    assert.deepEqual(versions.versions, ["v1"]);
    const core = await (await get("/api/v1")).json();
    assert.equal(core.kind, "APIResourceList");
    assert.equal(core.apiVersion, undefined); // as 1.20 writes /api/v1
    assert.equal(core.groupVersion, "v1");
    assert.deepEqual(core.resources.map((r: { name: string }) => r.name), [
      "configmaps",
      "secrets",
      "pods",
      "namespaces",
      "events",
    ]);
    assert.deepEqual(core.resources[2], {
      name: "pods",
      singularName: "", // as 1.20 writes its built-in resources
      namespaced: true,
      kind: "Pod",
      verbs: VERBS,
      shortNames: ["po"],
      categories: ["all"],
    });
    const groups = await (await get("/apis")).json();
    assert.equal(groups.kind, "APIGroupList");
    assert.deepEqual(groups.groups.map((g: { name: string }) => g.name), [
      "apps",
      "coordination.k8s.io",
      "events.k8s.io",
      "example.com",
    ]);
    assert.deepEqual(groups.groups[3], {
      name: "example.com",
      versions: [
        { groupVersion: "example.com/v1", version: "v1" },
        { groupVersion: "example.com/v2", version: "v2" },
      ],
      preferredVersion: { groupVersion: "example.com/v1", version: "v1" }, // the first added
    });
    const group = await (await get("/apis/example.com")).json();
    assert.equal(group.kind, "APIGroup");
    assert.equal(group.preferredVersion.version, "v1");
    const widgets = await (await get("/apis/example.com/v1")).json();
    assert.deepEqual(widgets.resources, [{
      name: "widgets",
      singularName: "wdgt",
      namespaced: false,
      kind: "Widget",
      verbs: ["get", "list"],
      shortNames: ["wd"],
      categories: ["all"],
    }]);
    for (const path of ["/apis/nope/v1", "/apis/apps/v9", "/apis/nope", "/api/v2"]) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal(await res.text(), "404 page not found\n");
    }
    assert.equal(server.requests.at(-1)?.verb, "get");
  });
});

test("FakeApiServer serves the aggregated documents when the Accept header asks (v2, v2beta1)", async () => {
  await withServer({}, async (_server, get) => {
    for (
      const [accept, version] of [[KUBECTL, "v2"], [V2, "v2"], [
        `${V2BETA1},application/json`,
        "v2beta1",
      ]]
    ) {
      const res = await get("/apis", accept);
      assert.equal(
        res.headers.get("content-type"),
        `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`,
      );
      const doc = await res.json();
      assert.equal(doc.kind, "APIGroupDiscoveryList");
      assert.equal(doc.apiVersion, `apidiscovery.k8s.io/${version}`);
      assert.deepEqual(doc.items.map((i: { metadata: { name: string } }) => i.metadata.name), [
        "apps",
        "coordination.k8s.io",
        "events.k8s.io",
      ]);
      assert.deepEqual(doc.items[0].versions, [{
        version: "v1",
        resources: [{
          resource: "deployments",
          responseKind: { group: "", version: "", kind: "Deployment" }, // as 1.37 writes it
          scope: "Namespaced",
          singularResource: "deployment",
          verbs: VERBS,
          shortNames: ["deploy"],
          categories: ["all"],
        }],
        freshness: "Current",
      }]);
    }
    const core = await (await get("/api", KUBECTL)).json();
    assert.equal(core.items.length, 1);
    assert.deepEqual(core.items[0].metadata, {}); // the core group: no name
    const ns = core.items[0].versions[0].resources.find((r: { resource: string }) =>
      r.resource === "namespaces"
    );
    assert.equal(ns.scope, "Cluster");
    // application/json first: the legacy form
    const legacy = await (await get("/apis", `application/json,${V2}`)).json();
    assert.equal(legacy.kind, "APIGroupList");
  });
});

test('FakeApiServer { discovery: "legacy" } answers as 1.20: the legacy form, 406 for only the aggregated one', async () => {
  await withServer({ discovery: "legacy" }, async (_server, get) => {
    assert.equal((await (await get("/apis", KUBECTL)).json()).kind, "APIGroupList");
    assert.equal((await (await get("/api", KUBECTL)).json()).kind, "APIVersions");
    const res = await get("/apis", V2);
    assert.equal(res.status, 406);
    const status = await res.json();
    assert.equal(status.reason, "NotAcceptable");
  });
  await assert.rejects(
    FakeApiServer.start({ discovery: "v2" as unknown as "legacy" }),
    /discovery must be "aggregated" or "legacy"/,
  );
});

test("FakeApiServer refuses a verb a resource does not serve with 405, as the real server", async () => {
  await withServer({
    resources: [{
      group: "",
      version: "v1",
      resource: "bindings",
      kind: "Binding",
      namespaced: true,
      verbs: ["create"],
    }],
  }, async (server, get) => {
    const list = await get("/api/v1/namespaces/default/bindings");
    assert.equal(list.status, 405);
    assert.equal((await list.json()).reason, "MethodNotAllowed");
    const created = await fetch(`${server.url}/api/v1/namespaces/default/bindings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ apiVersion: "v1", kind: "Binding", metadata: { name: "b" } }),
    });
    assert.equal(created.status, 201);
    await created.body?.cancel();
  });
});

test("addResource validates the discovery fields", async () => {
  await withServer({}, (server) => {
    const base = {
      group: "x.io",
      version: "v1",
      resource: "things",
      kind: "Thing",
      namespaced: true,
    };
    assert.throws(() => server.addResource({ ...base, shortNames: ["OK"] }), /shortNames/);
    assert.throws(
      () => server.addResource({ ...base, verbs: "list" as unknown as string[] }),
      /verbs/,
    );
    assert.throws(
      () => server.addResource({ ...base, categories: [1 as unknown as string] }),
      /categories/,
    );
    assert.throws(() => server.addResource({ ...base, singular: "A b" }), /singular/);
    return Promise.resolve();
  });
});
