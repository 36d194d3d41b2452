import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  parseAggregatedDiscovery,
  parseApiGroupList,
  parseApiResourceList,
  parseApiVersions,
} from "../../src/discovery/_discovery_documents.ts";

// Shapes as kube-apiserver 1.37 writes them (apidiscovery.k8s.io/v2; v2beta1 is the same shape).
const AGGREGATED_APIS = {
  kind: "APIGroupDiscoveryList",
  apiVersion: "apidiscovery.k8s.io/v2",
  metadata: {},
  items: [
    {
      metadata: { name: "apps", creationTimestamp: null },
      versions: [{
        version: "v1",
        resources: [{
          resource: "deployments",
          responseKind: { group: "apps", version: "v1", kind: "Deployment" },
          scope: "Namespaced",
          singularResource: "deployment",
          verbs: [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
          ],
          shortNames: ["deploy"],
          categories: ["all"],
          subresources: [
            {
              subresource: "scale",
              responseKind: { group: "autoscaling", version: "v1", kind: "Scale" },
              verbs: ["get", "patch", "update"],
            },
            {
              subresource: "status",
              responseKind: { group: "apps", version: "v1", kind: "Deployment" },
              verbs: ["get", "patch", "update"],
            },
          ],
        }],
        freshness: "Current",
      }],
    },
    {
      metadata: { name: "autoscaling", creationTimestamp: null },
      versions: [
        {
          version: "v2",
          resources: [{
            resource: "horizontalpodautoscalers",
            responseKind: { group: "autoscaling", version: "v2", kind: "HorizontalPodAutoscaler" },
            scope: "Namespaced",
            singularResource: "horizontalpodautoscaler",
            verbs: ["get", "list", "watch"],
            shortNames: ["hpa"],
          }],
          freshness: "Current",
        },
        {
          version: "v1",
          resources: [{
            resource: "horizontalpodautoscalers",
            responseKind: { group: "autoscaling", version: "v1", kind: "HorizontalPodAutoscaler" },
            scope: "Namespaced",
            singularResource: "horizontalpodautoscaler",
            verbs: ["get", "list", "watch"],
          }],
        },
      ],
    },
    {
      metadata: { name: "metrics.k8s.io", creationTimestamp: null },
      versions: [{ version: "v1beta1", resources: [], freshness: "Stale" }],
    },
    {
      metadata: { name: "rbac.authorization.k8s.io" },
      versions: [{
        version: "v1",
        resources: [
          {
            resource: "clusterroles",
            responseKind: {
              group: "rbac.authorization.k8s.io",
              version: "v1",
              kind: "ClusterRole",
            },
            scope: "Cluster",
            singularResource: "clusterrole",
            verbs: ["get", "list", "watch"],
          },
          { responseKind: { kind: "Nameless" } }, // skipped
          "garbage", // skipped
        ],
      }],
    },
  ],
};

test("parseAggregatedDiscovery: groups in order, preferred version first, scope, names, verbs, subresources", () => {
  const part = parseAggregatedDiscovery(AGGREGATED_APIS)!;
  assert.deepEqual(
    part.resources.map((r) => `${r.apiVersion} ${r.resource}`),
    [
      "apps/v1 deployments",
      "autoscaling/v2 horizontalpodautoscalers",
      "autoscaling/v1 horizontalpodautoscalers",
      "rbac.authorization.k8s.io/v1 clusterroles",
    ],
  );
  assert.deepEqual(part.resources[0], {
    apiVersion: "apps/v1",
    group: "apps",
    version: "v1",
    resource: "deployments",
    singular: "deployment",
    kind: "Deployment",
    shortNames: ["deploy"],
    categories: ["all"],
    namespaced: true,
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: ["scale", "status"],
  });
  assert.ok(Object.isFrozen(part.resources[0]) && Object.isFrozen(part.resources[0].verbs));
  assert.equal(part.resources[2].shortNames.length, 0); // absent lists are empty
  assert.equal(part.resources[3].namespaced, false);
  // a stale group version is a failure, its resources left out
  assert.deepEqual(part.failures.map((f) => f.groupVersion), ["metrics.k8s.io/v1beta1"]);
  assert.match(part.failures[0].error.message, /metrics\.k8s\.io\/v1beta1 is stale/);
});

test("parseAggregatedDiscovery: the core group (name absent or empty) at /api; v2beta1 alike", () => {
  const core = {
    kind: "APIGroupDiscoveryList",
    apiVersion: "apidiscovery.k8s.io/v2beta1",
    metadata: {},
    items: [{
      metadata: {}, // as 1.37 writes the core group
      versions: [{
        version: "v1",
        resources: [
          {
            resource: "pods",
            responseKind: { group: "", version: "v1", kind: "Pod" },
            scope: "Namespaced",
            singularResource: "pod",
            verbs: ["get", "list", "watch"],
            shortNames: ["po"],
            subresources: [{ subresource: "log", verbs: ["get"] }, { verbs: [] }],
          },
          {
            resource: "bindings",
            responseKind: { group: "", version: "v1", kind: "Binding" },
            scope: "Namespaced",
            singularResource: "binding",
            verbs: ["create"],
          },
        ],
        freshness: "Current",
      }],
    }],
  };
  const part = parseAggregatedDiscovery(core)!;
  assert.deepEqual(part.resources.map((r) => [r.apiVersion, r.group, r.resource, r.singular]), [
    ["v1", "", "pods", "pod"],
    ["v1", "", "bindings", "binding"],
  ]);
  assert.deepEqual(part.resources[0].subresources, ["log"]);
  assert.deepEqual(part.resources[1].verbs, ["create"]);
  assert.deepEqual(part.failures, []);
});

test("parseAggregatedDiscovery: another kind is undefined", () => {
  for (
    const doc of [null, [], "x", { kind: "APIGroupList", groups: [] }, { kind: "APIVersions" }]
  ) {
    assert.equal(parseAggregatedDiscovery(doc), undefined);
  }
  assert.deepEqual(parseAggregatedDiscovery({ kind: "APIGroupDiscoveryList" }), {
    resources: [],
    failures: [],
  });
});

test("legacy documents: APIVersions, APIGroupList (preferred version first), APIResourceList", () => {
  assert.deepEqual(
    parseApiVersions({
      kind: "APIVersions",
      versions: ["v1"],
      serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "10.0.0.1:6443" }],
    }),
    ["v1"],
  );
  assert.equal(parseApiVersions({ kind: "APIGroupList" }), undefined);
  assert.deepEqual(
    parseApiGroupList({
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [
        {
          name: "autoscaling",
          versions: [
            { groupVersion: "autoscaling/v1", version: "v1" },
            { groupVersion: "autoscaling/v2beta1", version: "v2beta1" },
            { groupVersion: "autoscaling/v2beta2", version: "v2beta2" },
          ],
          preferredVersion: { groupVersion: "autoscaling/v2beta2", version: "v2beta2" },
        },
        {
          name: "apps",
          versions: [{ groupVersion: "apps/v1", version: "v1" }],
          preferredVersion: { groupVersion: "apps/v1", version: "v1" },
        },
        { name: "nopreferred", versions: [{ version: "v1" }, { version: "v2" }] },
        { versions: [] },
      ],
    }),
    [
      { name: "autoscaling", versions: ["v2beta2", "v1", "v2beta1"] },
      { name: "apps", versions: ["v1"] },
      { name: "nopreferred", versions: ["v1", "v2"] },
    ],
  );
  assert.equal(parseApiGroupList({ kind: "APIVersions" }), undefined);
});

test("parseApiResourceList: 1.20's empty singularName is the lower-cased kind; name/sub entries are subresources", () => {
  // as kube-apiserver 1.20 writes /api/v1 (abridged)
  const doc = {
    kind: "APIResourceList",
    groupVersion: "v1",
    resources: [
      {
        name: "bindings",
        singularName: "",
        namespaced: true,
        kind: "Binding",
        verbs: ["create"],
      },
      {
        name: "pods",
        singularName: "",
        namespaced: true,
        kind: "Pod",
        verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        shortNames: ["po"],
        categories: ["all"],
        storageVersionHash: "xPOwRZ+Yhw8=",
      },
      { name: "pods/log", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
      { name: "pods/status", singularName: "", namespaced: true, kind: "Pod", verbs: ["get"] },
      {
        name: "nodes",
        singularName: "",
        namespaced: false,
        kind: "Node",
        verbs: ["get", "list", "watch"],
        shortNames: ["no"],
      },
      { name: "widgets", singularName: "widget", namespaced: true, kind: "Gizmo", verbs: [] },
    ],
  };
  const resources = parseApiResourceList(doc, "", "v1")!;
  assert.deepEqual(
    resources.map((r) => [r.apiVersion, r.resource, r.singular, r.namespaced, r.subresources]),
    [
      ["v1", "bindings", "binding", true, []],
      ["v1", "pods", "pod", true, ["log", "status"]],
      ["v1", "nodes", "node", false, []],
      ["v1", "widgets", "widget", true, []],
    ],
  );
  assert.deepEqual(resources[1].categories, ["all"]);
  const grouped = parseApiResourceList(
    { kind: "APIResourceList", resources: [{ name: "leases", kind: "Lease", namespaced: true }] },
    "coordination.k8s.io",
    "v1",
  )!;
  assert.equal(grouped[0].apiVersion, "coordination.k8s.io/v1");
  assert.deepEqual(grouped[0].verbs, []);
  assert.equal(parseApiResourceList({ kind: "Status" }, "", "v1"), undefined);
});
