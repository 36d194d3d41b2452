/**
 * Which resource a request is about.
 */
export interface ResourceRef {
  /** `"v1"` for the core group, `"GROUP/VERSION"` otherwise (`"apps/v1"`). */
  apiVersion: string;
  /** The plural resource name, lower case (`"configmaps"`, `"deployments"`). */
  resource: string;
  /** The namespace; omit for cluster-scoped resources or to span all namespaces. Default: all. */
  namespace?: string;
  /** One object's name (for get, update, delete). Default: the collection. */
  name?: string;
}

const SEGMENT = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function checkSegment(label: string, value: string): string {
  if (!SEGMENT.test(value)) {
    throw new TypeError(`invalid ${label} ${JSON.stringify(value)}: expected a DNS-style name`);
  }
  return encodeURIComponent(value);
}

/**
 * The REST path of a resource: `/api/v1/...` for the core group,
 * `/apis/GROUP/VERSION/...` for named groups, with `namespaces/NS/` when
 * namespaced. Throws a `TypeError` for malformed parts (which also keeps
 * them from escaping the path).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resourcePath } from "../../mod.ts";
 *
 * assert.equal(
 *   resourcePath({ apiVersion: "v1", resource: "configmaps", namespace: "default" }),
 *   "/api/v1/namespaces/default/configmaps",
 * );
 * assert.equal(
 *   resourcePath({
 *     apiVersion: "apps/v1",
 *     resource: "deployments",
 *     namespace: "prod",
 *     name: "web",
 *   }),
 *   "/apis/apps/v1/namespaces/prod/deployments/web",
 * );
 * assert.throws(
 *   () => resourcePath({ apiVersion: "v1", resource: "pods", namespace: "../x" }),
 *   TypeError,
 * );
 * ```
 */
export function resourcePath(ref: ResourceRef): string {
  const parts = ref.apiVersion.split("/");
  let base: string;
  if (parts.length === 1) {
    base = `/api/${checkSegment("version", parts[0])}`;
  } else if (parts.length === 2) {
    base = `/apis/${checkSegment("group", parts[0])}/${checkSegment("version", parts[1])}`;
  } else {
    throw new TypeError(`invalid apiVersion ${JSON.stringify(ref.apiVersion)}`);
  }
  const ns = ref.namespace ? `/namespaces/${checkSegment("namespace", ref.namespace)}` : "";
  const name = ref.name ? `/${checkSegment("name", ref.name)}` : "";
  return `${base}${ns}/${checkSegment("resource", ref.resource)}${name}`;
}
