/**
 * Reading the API server's discovery documents into {@linkcode ApiResource}s:
 * the aggregated form (`APIGroupDiscoveryList`, `apidiscovery.k8s.io` v2 or
 * v2beta1, one document for `/api` and one for `/apis`) and the legacy
 * forms (`APIVersions` at `/api`, `APIGroupList` at `/apis`,
 * `APIResourceList` per group version). Lenient as kubectl is: an entry
 * without a name is skipped, a missing list is empty; a document of
 * another kind is `undefined`.
 *
 * @module
 */
import type { ApiResource, DiscoveryFailure } from "./api_resource.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function objects(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === "string") : [];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function makeResource(
  group: string,
  version: string,
  fields: Omit<ApiResource, "apiVersion" | "group" | "version" | "singular"> & {
    singular: string;
  },
): ApiResource {
  return Object.freeze({
    apiVersion: group ? `${group}/${version}` : version,
    group,
    version,
    resource: fields.resource,
    singular: fields.singular || fields.kind.toLowerCase(),
    kind: fields.kind,
    shortNames: Object.freeze([...fields.shortNames]),
    categories: Object.freeze([...fields.categories]),
    namespaced: fields.namespaced,
    verbs: Object.freeze([...fields.verbs]),
    subresources: Object.freeze([...fields.subresources]),
  });
}

/** What one discovery document holds: resources, and the group versions it says are stale. */
export interface DiscoveredPart {
  resources: ApiResource[];
  failures: DiscoveryFailure[];
}

/**
 * An `APIGroupDiscoveryList` (`/api` or `/apis` asked for with
 * `as=APIGroupDiscoveryList`): groups in the server's order, each group's
 * versions with the preferred first. A version whose `freshness` is
 * `"Stale"` (an aggregated API that is not answering) is a failure, its
 * resources left out, as kubectl does. `undefined` when `doc` is another kind.
 */
export function parseAggregatedDiscovery(doc: unknown): DiscoveredPart | undefined {
  if (!isObject(doc) || doc.kind !== "APIGroupDiscoveryList") return undefined;
  const part: DiscoveredPart = { resources: [], failures: [] };
  for (const item of objects(doc.items)) {
    const group = text(isObject(item.metadata) ? item.metadata.name : undefined);
    for (const v of objects(item.versions)) {
      const version = text(v.version);
      if (!version) continue;
      const groupVersion = group ? `${group}/${version}` : version;
      if (v.freshness === "Stale") {
        const error = new Error(`the server's discovery of ${groupVersion} is stale`);
        part.failures.push({ groupVersion, error });
        continue;
      }
      for (const r of objects(v.resources)) {
        const resource = text(r.resource);
        if (!resource) continue;
        part.resources.push(makeResource(group, version, {
          resource,
          singular: text(r.singularResource),
          kind: text(isObject(r.responseKind) ? r.responseKind.kind : undefined),
          shortNames: strings(r.shortNames),
          categories: strings(r.categories),
          namespaced: r.scope === "Namespaced",
          verbs: strings(r.verbs),
          subresources: objects(r.subresources).map((s) => text(s.subresource)).filter(Boolean),
        }));
      }
    }
  }
  return part;
}

/** The versions of an `APIVersions` document (`/api` in the legacy form). */
export function parseApiVersions(doc: unknown): string[] | undefined {
  if (!isObject(doc) || doc.kind !== "APIVersions") return undefined;
  return strings(doc.versions).filter(Boolean);
}

/** One group of an `APIGroupList`, with its versions, the preferred first. */
export interface LegacyGroup {
  name: string;
  versions: string[];
}

/** The groups of an `APIGroupList` (`/apis` in the legacy form), each with its preferred version first. */
export function parseApiGroupList(doc: unknown): LegacyGroup[] | undefined {
  if (!isObject(doc) || doc.kind !== "APIGroupList") return undefined;
  const groups: LegacyGroup[] = [];
  for (const g of objects(doc.groups)) {
    const name = text(g.name);
    if (!name) continue;
    const all = objects(g.versions).map((v) => text(v.version)).filter(Boolean);
    const preferred = text(isObject(g.preferredVersion) ? g.preferredVersion.version : undefined);
    const versions = all.includes(preferred)
      ? [preferred, ...all.filter((v) => v !== preferred)]
      : all;
    groups.push({ name, versions });
  }
  return groups;
}

/**
 * The resources of an `APIResourceList` (`/api/v1`, `/apis/GROUP/VERSION`):
 * entries named `resource/sub` are subresources of `resource`; an empty
 * `singularName` (1.20's built-in resources) becomes the lower-cased kind.
 */
export function parseApiResourceList(
  doc: unknown,
  group: string,
  version: string,
): ApiResource[] | undefined {
  if (!isObject(doc) || doc.kind !== "APIResourceList") return undefined;
  const entries = objects(doc.resources);
  const subresources = new Map<string, string[]>();
  for (const e of entries) {
    const [parent, sub] = text(e.name).split("/", 2);
    if (parent && sub) subresources.set(parent, [...subresources.get(parent) ?? [], sub]);
  }
  const resources: ApiResource[] = [];
  for (const e of entries) {
    const resource = text(e.name);
    if (!resource || resource.includes("/")) continue;
    resources.push(makeResource(group, version, {
      resource,
      singular: text(e.singularName),
      kind: text(e.kind),
      shortNames: strings(e.shortNames),
      categories: strings(e.categories),
      namespaced: e.namespaced === true,
      verbs: strings(e.verbs),
      subresources: subresources.get(resource) ?? [],
    }));
  }
  return resources;
}
