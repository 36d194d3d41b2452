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
