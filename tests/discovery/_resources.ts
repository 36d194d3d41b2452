/**
 * ApiResources for the discovery tests, in priority order as a real
 * cluster lists them.
 */
import type { ApiResource } from "../../mod.ts";

const ALL = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/** One resource; `gv` is `"v1"` or `"GROUP/VERSION"`. */
export function res(
  gv: string,
  resource: string,
  kind: string,
  more: Partial<ApiResource> = {},
): ApiResource {
  const [group, version] = gv.includes("/") ? gv.split("/") : ["", gv];
  return {
    apiVersion: gv,
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    shortNames: [],
    categories: [],
    namespaced: true,
    verbs: ALL,
    subresources: [],
    ...more,
  };
}

export const PODS = res("v1", "pods", "Pod", { shortNames: ["po"], categories: ["all"] });
export const CONFIGMAPS = res("v1", "configmaps", "ConfigMap", { shortNames: ["cm"] });
export const EVENTS = res("v1", "events", "Event", { shortNames: ["ev"] });
export const NODES = res("v1", "nodes", "Node", { shortNames: ["no"], namespaced: false });
export const BINDINGS = res("v1", "bindings", "Binding", { verbs: ["create"] });
export const DEPLOYMENTS = res("apps/v1", "deployments", "Deployment", {
  shortNames: ["deploy"],
  subresources: ["scale", "status"],
});
export const NEW_EVENTS = res("events.k8s.io/v1", "events", "Event", { shortNames: ["ev"] });
export const HPA_V2 = res("autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", {
  shortNames: ["hpa"],
});
export const HPA_V1 = res("autoscaling/v1", "horizontalpodautoscalers", "HorizontalPodAutoscaler", {
  shortNames: ["hpa"],
});
/** Only in autoscaling's older version. */
export const OLD_ONLY = res("autoscaling/v1", "oldthings", "OldThing");
export const POD_METRICS = res("metrics.k8s.io/v1beta1", "pods", "PodMetrics", {
  verbs: ["get", "list"],
});
export const WIDGETS = res("example.com/v1", "widgets", "Widget", { shortNames: ["wd"] });
/** A CRD whose kind is not its singular capitalised. */
export const GADGETS = res("example.com/v1", "gadgets", "Gizmo", { singular: "gadget" });

/** In priority order: core, then groups in the server's order, preferred versions first. */
export const CLUSTER: readonly ApiResource[] = [
  PODS,
  CONFIGMAPS,
  EVENTS,
  NODES,
  BINDINGS,
  DEPLOYMENTS,
  NEW_EVENTS,
  HPA_V2,
  HPA_V1,
  OLD_ONLY,
  POD_METRICS,
  WIDGETS,
  GADGETS,
];
