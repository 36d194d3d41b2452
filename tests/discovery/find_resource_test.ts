import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { findResource } from "../../src/discovery/_find_resource.ts";
import {
  CLUSTER,
  CONFIGMAPS,
  DEPLOYMENTS,
  EVENTS,
  GADGETS,
  HPA_V1,
  HPA_V2,
  NEW_EVENTS,
  NODES,
  OLD_ONLY,
  POD_METRICS,
  PODS,
  res,
  WIDGETS,
} from "./_resources.ts";

test("findResource resolves what kubectl accepts", () => {
  const rows: Array<[string, unknown]> = [
    // plural, singular, short name, kind, in any case for names and kinds
    ["pods", PODS],
    ["pod", PODS],
    ["po", PODS],
    ["Pod", PODS],
    ["PODS", PODS],
    ["cm", CONFIGMAPS],
    ["ConfigMap", CONFIGMAPS],
    ["configmap", CONFIGMAPS],
    ["no", NODES],
    ["deploy", DEPLOYMENTS],
    ["deployment", DEPLOYMENTS],
    ["Deployment", DEPLOYMENTS],
    // group-qualified
    ["deployments.apps", DEPLOYMENTS],
    ["deployment.apps", DEPLOYMENTS],
    ["deploy.apps", DEPLOYMENTS],
    ["Deployment.apps", DEPLOYMENTS],
    // version- and group-qualified
    ["deployments.v1.apps", DEPLOYMENTS],
    ["Deployment.v1.apps", DEPLOYMENTS],
    ["pods.v1.", PODS], // the core group, spelled out
    ["pods.", PODS],
    // the core group wins a tie, then the groups in the server's order
    ["events", EVENTS],
    ["ev", EVENTS],
    ["events.events.k8s.io", NEW_EVENTS],
    ["ev.events.k8s.io", NEW_EVENTS],
    ["Event.v1.events.k8s.io", NEW_EVENTS],
    ["pods.metrics.k8s.io", POD_METRICS],
    ["PodMetrics", POD_METRICS],
    // the preferred version, unless another is named; a resource of an older version only
    ["hpa", HPA_V2],
    ["horizontalpodautoscalers.autoscaling", HPA_V2],
    ["hpa.v1.autoscaling", HPA_V1],
    ["horizontalpodautoscalers.v1.autoscaling", HPA_V1],
    ["HorizontalPodAutoscaler.v1.autoscaling", HPA_V1],
    ["oldthings", OLD_ONLY],
    // a CRD's names and kind
    ["widgets", WIDGETS],
    ["widget", WIDGETS],
    ["wd", WIDGETS],
    ["Widget", WIDGETS],
    ["widgets.example.com", WIDGETS],
    ["Widget.v1.example.com", WIDGETS],
    ["gadget", GADGETS],
    ["Gizmo", GADGETS],
    ["gizmo.example.com", GADGETS],
    // unknown
    ["deplyo", undefined],
    ["deployments.v2.apps", undefined], // apps has no v2, and no group is "v2.apps"
    ["deployments.nope", undefined],
    ["pods.v2.", undefined],
    ["", undefined],
    [" pods", undefined],
    ["po ds", undefined],
  ];
  for (const [input, want] of rows) {
    assert.equal(findResource(CLUSTER, input), want, JSON.stringify(input));
  }
});

test("findResource: an exact name anywhere wins over a short name, names over kinds", () => {
  const shortInCore = res("v1", "services", "Service", { shortNames: ["svc"] });
  const namedSvc = res("x.io/v1", "svc", "Thing");
  const kindPods = res("y.io/v1", "things", "Pods", { singular: "thing" });
  const list = [shortInCore, namedSvc, kindPods, PODS];
  assert.equal(findResource(list, "svc"), namedSvc); // kubectl's shortcut expander skips exact names
  assert.equal(findResource(list, "svc.v1.x.io"), namedSvc);
  assert.equal(findResource(list, "pods"), PODS); // a plural before an earlier kind
  assert.equal(findResource([shortInCore], "svc"), shortInCore);
});
