/**
 * The discovery documents of the fake API server, built from the resources
 * it serves: the legacy forms of kube-apiserver 1.20 (`APIVersions` at
 * `/api`, `APIResourceList` at `/api/v1` and `/apis/GROUP/VERSION`,
 * `APIGroupList` at `/apis`, `APIGroup` at `/apis/GROUP`) and, when the
 * `Accept` header asks for it, the aggregated `APIGroupDiscoveryList` of
 * 1.26+ (`apidiscovery.k8s.io` v2 or v2beta1) at `/api` and `/apis`.
 * Groups and versions come in the order their first resource was added:
 * the first version of a group is its preferred one.
 *
 * @module
 */
import type { Resource } from "./_resources.ts";

/** The aggregated versions served. */
export type AggregatedVersion = "v2" | "v2beta1";

/** Groups, in order, each with its versions in order, each with its resources. */
function groupsOf(resources: readonly Resource[]): Map<string, Map<string, Resource[]>> {
  const groups = new Map<string, Map<string, Resource[]>>();
  for (const r of resources) {
    const versions = groups.get(r.group) ?? new Map<string, Resource[]>();
    groups.set(r.group, versions);
    versions.set(r.version, [...versions.get(r.version) ?? [], r]);
  }
  return groups;
}

/**
 * What the `Accept` header asks of `/api` or `/apis`, read in the client's
 * order as the real server does: an aggregated version, `"legacy"`
 * (`application/json`, `*\/*`, or no header), or `undefined` when nothing
 * acceptable is asked for (406). `aggregated: false` (a 1.20 server) never
 * picks an aggregated version.
 */
export function negotiateDiscovery(
  accept: string | undefined,
  aggregated: boolean,
): AggregatedVersion | "legacy" | undefined {
  if (accept === undefined || accept.trim() === "") return "legacy";
  for (const entry of accept.split(",")) {
    const [type, ...params] = entry.split(";").map((p) => p.trim());
    const p = new Map(params.map((x) => {
      const i = x.indexOf("=");
      return [x.slice(0, i).trim(), x.slice(i + 1).trim()] as const;
    }));
    if (!["application/json", "application/*", "*/*"].includes(type.toLowerCase())) continue;
    if (!p.has("as")) return "legacy";
    const v = p.get("v");
    if (
      aggregated && p.get("as") === "APIGroupDiscoveryList" &&
      p.get("g") === "apidiscovery.k8s.io" && (v === "v2" || v === "v2beta1")
    ) {
      return v;
    }
  }
  return undefined;
}

/** The `Content-Type` of an aggregated document. */
export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/** `/api` (`root: "api"`, the core group) or `/apis` (every other group), aggregated. */
export function aggregatedDocument(
  resources: readonly Resource[],
  root: "api" | "apis",
  version: AggregatedVersion,
): unknown {
  const items = [];
  for (const [group, versions] of groupsOf(resources)) {
    if ((group === "") !== (root === "api")) continue;
    items.push({
      // as 1.37 writes them: the core group's item has no name
      metadata: group ? { name: group } : {},
      versions: [...versions].map(([v, list]) => ({
        version: v,
        resources: list.map((r) => ({
          resource: r.resource,
          // 1.37 leaves group and version empty for built-in resources
          responseKind: { group: "", version: "", kind: r.kind },
          scope: r.namespaced ? "Namespaced" : "Cluster",
          singularResource: r.singular,
          verbs: [...r.verbs].sort(),
          ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
          ...(r.categories.length ? { categories: [...r.categories] } : {}),
        })),
        freshness: "Current",
      })),
    });
  }
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items,
  };
}

/** `/api`, legacy: the core group's versions. */
export function apiVersionsDocument(resources: readonly Resource[], address: string): unknown {
  const core = groupsOf(resources).get("") ?? new Map();
  return {
    kind: "APIVersions",
    versions: [...core.keys()],
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: address }],
  };
}

function apiGroup(name: string, versions: Map<string, Resource[]>) {
  const list = [...versions.keys()].map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

/** `/apis`, legacy: every named group, its first version preferred. */
export function apiGroupListDocument(resources: readonly Resource[]): unknown {
  const groups = [...groupsOf(resources)].filter(([name]) => name !== "");
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groups.map(([name, versions]) => apiGroup(name, versions)),
  };
}

/** `/apis/GROUP`: one group, or undefined when none is served. */
export function apiGroupDocument(resources: readonly Resource[], group: string): unknown {
  const versions = group === "" ? undefined : groupsOf(resources).get(group);
  return versions && { kind: "APIGroup", apiVersion: "v1", ...apiGroup(group, versions) };
}

/**
 * `/api/VERSION` or `/apis/GROUP/VERSION`: an `APIResourceList` as 1.20
 * writes it (`singularName` empty where it is the lower-cased kind, as for
 * 1.20's built-in resources), or undefined when no resource is served there.
 */
export function apiResourceListDocument(
  resources: readonly Resource[],
  group: string,
  version: string,
): unknown {
  const list = groupsOf(resources).get(group)?.get(version);
  if (!list) return undefined;
  return {
    kind: "APIResourceList",
    // 1.20 writes no apiVersion in /api/v1's list, "v1" in the groups'
    ...(group ? { apiVersion: "v1" } : {}),
    groupVersion: group ? `${group}/${version}` : version,
    resources: list.map((r) => ({
      name: r.resource,
      singularName: r.singular === r.kind.toLowerCase() ? "" : r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: [...r.verbs].sort(),
      ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
      ...(r.categories.length ? { categories: [...r.categories] } : {}),
    })),
  };
}
