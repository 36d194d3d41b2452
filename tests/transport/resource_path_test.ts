import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { resourcePath } from "../../src/transport/resource_path.ts";

test("resourcePath builds core and grouped, namespaced and cluster-wide paths", () => {
  assert.equal(resourcePath({ apiVersion: "v1", resource: "configmaps" }), "/api/v1/configmaps");
  assert.equal(
    resourcePath({ apiVersion: "v1", resource: "configmaps", namespace: "fx" }),
    "/api/v1/namespaces/fx/configmaps",
  );
  assert.equal(
    resourcePath({ apiVersion: "apps/v1", resource: "deployments" }),
    "/apis/apps/v1/deployments",
  );
  assert.equal(
    resourcePath({
      apiVersion: "example.com/v1beta1",
      resource: "widgets",
      namespace: "a",
      name: "w1",
    }),
    "/apis/example.com/v1beta1/namespaces/a/widgets/w1",
  );
});

test("resourcePath rejects parts that could escape the path", () => {
  assert.throws(() => resourcePath({ apiVersion: "v1", resource: "../secrets" }), TypeError);
  assert.throws(() => resourcePath({ apiVersion: "a/b/c", resource: "x" }), TypeError);
  assert.throws(
    () => resourcePath({ apiVersion: "v1", resource: "pods", namespace: "a/b" }),
    TypeError,
  );
});

test("resourcePath accepts any name that can be a path segment and percent-encodes it", () => {
  const role = (name: string) =>
    resourcePath({ apiVersion: "rbac.authorization.k8s.io/v1", resource: "clusterroles", name });
  assert.equal(
    role("system:controller:foo"),
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:foo",
  );
  assert.equal(
    role("Upper_case name?#"),
    "/apis/rbac.authorization.k8s.io/v1/clusterroles/Upper_case%20name%3F%23",
  );
  assert.equal(role("..."), "/apis/rbac.authorization.k8s.io/v1/clusterroles/...");
  assert.equal(role("é"), "/apis/rbac.authorization.k8s.io/v1/clusterroles/%C3%A9");
});

test("resourcePath refuses names that cannot be a path segment, saying why", () => {
  for (const name of [".", "..", "a/b", "%2F", "50%", "\ud800"]) {
    assert.throws(
      () => resourcePath({ apiVersion: "v1", resource: "configmaps", namespace: "fx", name }),
      (err: unknown) =>
        err instanceof TypeError && err.message.startsWith(`invalid name ${JSON.stringify(name)}:`),
      name,
    );
  }
  assert.throws(
    () => resourcePath({ apiVersion: "v1", resource: "configmaps", name: "a/b" }),
    /cannot be empty, "\." or "\.\.", nor contain "\/" or "%"/,
  );
});

test("resourcePath keeps namespaces to DNS labels, the only names a namespace can have", () => {
  for (const namespace of ["a.b", "Team", "system:x", "a".repeat(64), "-a"]) {
    assert.throws(
      () => resourcePath({ apiVersion: "v1", resource: "configmaps", namespace }),
      /invalid namespace .*: expected a DNS label/,
      namespace,
    );
  }
  assert.equal(
    resourcePath({ apiVersion: "v1", resource: "configmaps", namespace: "a".repeat(63) }),
    `/api/v1/namespaces/${"a".repeat(63)}/configmaps`,
  );
});

test("resourcePath refuses an apiVersion without its version, saying what was expected", () => {
  assert.throws(
    () => resourcePath({ apiVersion: "apps", resource: "deployments" }),
    (err: unknown) =>
      err instanceof TypeError &&
      err.message ===
        'invalid apiVersion "apps": expected "v1" for the core group or "GROUP/VERSION" with both parts (such as "apps/v1")',
  );
  for (const apiVersion of ["networking.k8s.io", "apps/", "/v1", "", "v1/", "V1", "a/b/c"]) {
    assert.throws(
      () => resourcePath({ apiVersion, resource: "x" }),
      /^TypeError: invalid apiVersion .*expected "v1" for the core group or "GROUP\/VERSION"/,
      apiVersion,
    );
  }
  assert.equal(resourcePath({ apiVersion: "v2beta1", resource: "x" }), "/api/v2beta1/x");
  assert.equal(
    resourcePath({ apiVersion: "batch/v1", resource: "jobs" }),
    "/apis/batch/v1/jobs",
  );
});
