/**
 * Resolves a request path the way the API server's request-info resolver
 * does: `/api/v1/...` (core) or `/apis/GROUP/VERSION/...`, then
 * `RESOURCE[/NAME]` or `namespaces/NS/RESOURCE[/NAME]`.
 *
 * @module
 */
import type { Resource, ResourceRegistry } from "./_resources.ts";
import type { RequestVerb } from "./types.ts";

/** True for the spellings of true that Go's `strconv.ParseBool` accepts (`watch=1`, `watch=true`...). */
export function queryFlag(value: string | null): boolean {
  return value !== null && ["1", "t", "T", "true", "TRUE", "True"].includes(value);
}

/** Where a request goes. */
export type Route =
  | {
    kind: "resource";
    verb: RequestVerb;
    resource: Resource;
    namespace?: string;
    name?: string;
  }
  /** An API path naming no served resource (or a subresource): 404 Status. */
  | {
    kind: "unknown-resource";
    verb: RequestVerb;
    group: string;
    resourceName?: string;
    namespace?: string;
    name?: string;
  }
  /**
   * A discovery document (`GET` only): `/api`, `/api/VERSION`, `/apis`,
   * `/apis/GROUP`, `/apis/GROUP/VERSION` (`group` `""` for the core group;
   * `version` absent for a root or a group).
   */
  | { kind: "discovery"; verb: "get"; root: "api" | "apis"; group?: string; version?: string }
  /** A path outside the API: 404 as plain text. */
  | { kind: "not-found"; verb: "unknown" };

/** Resolves `method` and `path` against the served resources. */
export function resolveRoute(
  method: string,
  path: string,
  query: URLSearchParams,
  registry: ResourceRegistry,
): Route {
  let segments: string[];
  try {
    segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return { kind: "not-found", verb: "unknown" };
  }
  if (method === "GET" && (segments[0] === "api" || segments[0] === "apis")) {
    const [root, a, b] = segments as ["api" | "apis", string?, string?];
    if (segments.length === 1) return { kind: "discovery", verb: "get", root };
    if (root === "api" && segments.length === 2) {
      return { kind: "discovery", verb: "get", root, group: "", version: a };
    }
    if (root === "apis" && segments.length <= 3) {
      return { kind: "discovery", verb: "get", root, group: a, version: b };
    }
  }
  let group: string;
  let rest: string[];
  if (segments[0] === "api" && segments.length >= 2) {
    group = "";
    rest = segments.slice(1);
  } else if (segments[0] === "apis" && segments.length >= 3) {
    group = segments[1];
    rest = segments.slice(2);
  } else {
    return { kind: "not-found", verb: "unknown" };
  }
  const [version, ...tail] = rest;
  const namespaced = tail[0] === "namespaces" && tail.length >= 3;
  const namespace = namespaced ? tail[1] : undefined;
  const [resourceName, name, subresource] = namespaced ? tail.slice(2) : tail;
  const verb = verbOf(method, name, query);
  const resource = resourceName === undefined
    ? undefined
    : registry.byPath(group, version, resourceName);
  const unknown = { kind: "unknown-resource", verb, group, resourceName, namespace, name } as const;
  if (!resource || subresource !== undefined) return unknown;
  if (namespace !== undefined && !resource.namespaced) return unknown;
  if (namespace === undefined && resource.namespaced && (name !== undefined || verb === "create")) {
    return unknown;
  }
  return { kind: "resource", verb, resource, namespace, name };
}

function verbOf(method: string, name: string | undefined, query: URLSearchParams): RequestVerb {
  switch (method) {
    case "GET":
      if (name !== undefined) return "get";
      return queryFlag(query.get("watch")) ? "watch" : "list";
    case "POST":
      return name === undefined ? "create" : "unknown";
    case "PUT":
      return name === undefined ? "unknown" : "update";
    case "PATCH":
      return name === undefined ? "unknown" : "patch";
    case "DELETE":
      return name === undefined ? "unknown" : "delete";
    default:
      return "unknown";
  }
}
