import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceClient } from "../../src/transport/resource_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

type ClusterRole = KubeObject & { rules?: { verbs: string[]; resources?: string[] }[] };

const RBAC = "rbac.authorization.k8s.io/v1";
const NAME = "system:controller:foo";

async function withClusterRoles(
  fn: (ctx: {
    server: FakeApiServer;
    client: KubeClient;
    roles: ReturnType<typeof resourceClient<ClusterRole>>;
    paths: string[];
  }) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start();
  server.addResource({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    resource: "clusterroles",
    kind: "ClusterRole",
    namespaced: false,
  });
  const paths: string[] = [];
  const recording: typeof fetch = (input, init) => {
    paths.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
    return fetch(input, init);
  };
  const client = new KubeClient({ server: server.url, fetch: recording });
  try {
    const roles = resourceClient<ClusterRole>(client, {
      apiVersion: RBAC,
      resource: "clusterroles",
    });
    await fn({ server, client, roles, paths });
  } finally {
    await server.close();
  }
}

function role(verbs: string[]): ClusterRole {
  return {
    apiVersion: RBAC,
    kind: "ClusterRole",
    metadata: { name: NAME },
    rules: [{ verbs, resources: ["jobs"] }],
  };
}

test("a ClusterRole named system:controller:foo round-trips get, patch, apply and delete", async () => {
  await withClusterRoles(async ({ server, roles, paths }) => {
    await roles.create(role(["get"]));
    assert.equal((await roles.get(NAME)).metadata.name, NAME);
    const patched = await roles.patch(NAME, { metadata: { labels: { a: "1" } } });
    assert.deepEqual(patched.metadata.labels, { a: "1" });
    const applied = await roles.apply(role(["get", "list"]), { fieldManager: "me" });
    assert.deepEqual(applied.rules?.[0].verbs, ["get", "list"]);
    assert.ok(server.get({ apiVersion: RBAC, kind: "ClusterRole", name: NAME }));
    await roles.delete(NAME);
    assert.equal(server.get({ apiVersion: RBAC, kind: "ClusterRole", name: NAME }), undefined);
    const one = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${NAME}`;
    assert.deepEqual(paths, [
      "/apis/rbac.authorization.k8s.io/v1/clusterroles",
      one,
      one,
      one,
      one,
    ]);
    assert.deepEqual(server.requests.slice(1).map((r) => [r.verb, r.name]), [
      ["get", NAME],
      ["patch", NAME],
      ["patch", NAME],
      ["delete", NAME],
    ]);
  });
});

test("the test kit decodes a percent-encoded name as the API server does", async () => {
  await withClusterRoles(async ({ client, roles }) => {
    await roles.create(role(["get"]));
    const path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/system%3Acontroller%3Afoo";
    const got = await client.requestJson<ClusterRole>(path);
    assert.equal(got.metadata.name, NAME);
    const spaced = { ...role([]), metadata: { name: "a b+c" } };
    await roles.create(spaced);
    assert.equal((await roles.get("a b+c")).metadata.name, "a b+c");
  });
});

test("names that cannot be a path segment are refused with a TypeError before sending", async () => {
  await withClusterRoles(async ({ roles, paths }) => {
    const calls = {
      get: (name: string) => roles.get(name),
      patch: (name: string) => roles.patch(name, { metadata: {} }),
      apply: (name: string) =>
        roles.apply({ ...role([]), metadata: { name } }, { fieldManager: "me" }),
      delete: (name: string) => roles.delete(name),
    };
    for (const [what, call] of Object.entries(calls)) {
      for (const name of ["..", "a/b", "%2F"]) {
        await assert.rejects(
          call(name),
          (err: unknown) =>
            err instanceof TypeError &&
            err.message ===
              `invalid name ${
                JSON.stringify(name)
              }: a name cannot be empty, "." or "..", nor contain "/" or "%"`,
          `${what} ${name}`,
        );
      }
      await assert.rejects(
        call(""),
        (err: unknown) =>
          err instanceof TypeError && err.message === `resourceClient.${what}: a name is required`,
        `${what} ""`,
      );
    }
    assert.deepEqual(paths, [], "nothing sent");
  });
});

test("an apiVersion without its version is refused at construction, naming what was expected", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:9" });
  const expected =
    /^TypeError: invalid apiVersion "apps": expected "v1" for the core group or "GROUP\/VERSION" with both parts \(such as "apps\/v1"\)$/;
  assert.throws(
    () => resourceListerWatcher(client, { apiVersion: "apps", resource: "deployments" }),
    expected,
  );
  assert.throws(
    () => resourceClient(client, { apiVersion: "apps", resource: "deployments" }),
    expected,
  );
  assert.ok(resourceListerWatcher(client, { apiVersion: "apps/v1", resource: "deployments" }));
});
