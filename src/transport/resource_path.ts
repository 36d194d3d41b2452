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

/** A resource's plural name, or an API group: lower-case DNS-style. */
const DNS_STYLE = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** A namespace: a DNS label (RFC 1123), what the API server accepts for every namespace. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** An API version of a group: a DNS label starting with a letter (`v1`, `v1beta1`). */
const GROUP_VERSION = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** The core group's version, alone: `v1` (Kubernetes' version form, `vN[alphaM|betaM]`). */
const CORE_VERSION = /^v[0-9]+((alpha|beta)[0-9]+)?$/;

function checked(label: string, value: string, rule: RegExp, expected: string): string {
  if (typeof value !== "string" || !rule.test(value)) {
    throw new TypeError(`invalid ${label} ${JSON.stringify(value)}: expected ${expected}`);
  }
  return value;
}

/**
 * The API base path of `apiVersion`: `/api/v1` for the core group,
 * `/apis/GROUP/VERSION` otherwise. A group without a version (`"apps"`)
 * is refused here, where it would otherwise read as a core version and
 * build `/api/apps/...`.
 */
function apiBase(apiVersion: string): string {
  if (typeof apiVersion !== "string") {
    throw new TypeError(`invalid apiVersion ${String(apiVersion)}: expected a string`);
  }
  const parts = apiVersion.split("/");
  if (parts.length === 1 && CORE_VERSION.test(parts[0])) return `/api/${parts[0]}`;
  if (parts.length === 2 && DNS_STYLE.test(parts[0]) && GROUP_VERSION.test(parts[1])) {
    return `/apis/${parts[0]}/${parts[1]}`;
  }
  const group = parts.length === 1 && DNS_STYLE.test(parts[0]) ? parts[0] : "apps";
  throw new TypeError(
    `invalid apiVersion ${JSON.stringify(apiVersion)}: expected "v1" for the core group ` +
      `or "GROUP/VERSION" with both parts (such as "${group}/v1")`,
  );
}

/**
 * An object's name as one path segment: the API server accepts any name
 * that can be one (`system:controller:foo` for a ClusterRole), refusing
 * only `.`, `..` and names holding `/` or `%` (its `IsValidPathSegmentName`),
 * so this refuses exactly those and the empty name, and percent-encodes the
 * rest. `:` stays as it is, as client-go sends it (the API server decodes
 * `%3A` to the same name).
 */
function nameSegment(name: string): string {
  if (
    typeof name !== "string" || name === "" || name === "." || name === ".." || /[/%]/.test(name)
  ) {
    throw new TypeError(
      `invalid name ${
        JSON.stringify(name)
      }: a name cannot be empty, "." or "..", nor contain "/" or "%"`,
    );
  }
  try {
    return encodeURIComponent(name).replaceAll("%3A", ":");
  } catch {
    // a lone UTF-16 surrogate: no UTF-8 spelling, so no path segment either
    throw new TypeError(`invalid name ${JSON.stringify(name)}: not well-formed Unicode`);
  }
}

/**
 * The REST path of a resource: `/api/v1/...` for the core group,
 * `/apis/GROUP/VERSION/...` for named groups, with `namespaces/NS/` when
 * namespaced. Throws a `TypeError` for a malformed part, which also keeps
 * it from escaping the path: an `apiVersion` that is neither a core
 * version (`"v1"`) nor `"GROUP/VERSION"` (a bare `"apps"`), a resource
 * that is not a lower-case DNS-style name, a namespace that is not a DNS
 * label (no namespace can be anything else), or a name that cannot be a
 * path segment (empty, `.`, `..`, holding `/` or `%`). Any other name is
 * accepted and percent-encoded (`:` is kept).
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
 * assert.equal(
 *   resourcePath({
 *     apiVersion: "rbac.authorization.k8s.io/v1",
 *     resource: "clusterroles",
 *     name: "system:controller:job-controller",
 *   }),
 *   "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:job-controller",
 * );
 * assert.throws(
 *   () => resourcePath({ apiVersion: "v1", resource: "pods", namespace: "../x" }),
 *   TypeError,
 * );
 * assert.throws(() => resourcePath({ apiVersion: "apps", resource: "deployments" }), /apps\/v1/);
 * ```
 */
export function resourcePath(ref: ResourceRef): string {
  const base = apiBase(ref.apiVersion);
  const ns = ref.namespace
    ? `/namespaces/${
      checked(
        "namespace",
        ref.namespace,
        DNS_LABEL,
        "a DNS label (lower-case letters, digits and '-', at most 63)",
      )
    }`
    : "";
  const resource = checked(
    "resource",
    ref.resource,
    DNS_STYLE,
    "a lower-case plural resource name",
  );
  const name = ref.name ? `/${nameSegment(ref.name)}` : "";
  return `${base}${ns}/${resource}${name}`;
}
