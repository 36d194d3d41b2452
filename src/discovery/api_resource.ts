/**
 * One resource of the API server, as discovery describes it.
 *
 * @module
 */

/**
 * A resource the API server serves, as discovery describes it: what
 * kubectl knows of `deploy` once it has resolved it. It has `apiVersion`
 * and `resource`, so it is a `ResourceRef`: `resourceClient(client, res)`,
 * `resourceListerWatcher(client, res)` and `informerFor(res)` take it as
 * it is (spread it to add a namespace or selectors:
 * `{ ...res, namespace: "prod" }`). Given one, they also check its scope
 * (a namespace on a cluster-scoped resource is a `TypeError`) and, for
 * lists and watches, its verbs (a {@linkcode ResourceVerbError}).
 */
export interface ApiResource {
  /** `"v1"` for the core group, `"GROUP/VERSION"` otherwise (`"apps/v1"`). */
  readonly apiVersion: string;
  /** The API group: `""` for the core group, `"apps"`, `"example.com"`... */
  readonly group: string;
  /** The version in the group: `"v1"`, `"v1beta1"`... */
  readonly version: string;
  /** The plural name used in paths: `"deployments"`. */
  readonly resource: string;
  /** The singular name: `"deployment"` (the lower-cased kind when the server gives none, as 1.20 does for built-in resources). */
  readonly singular: string;
  /** The kind of its objects: `"Deployment"`. */
  readonly kind: string;
  /** Short names (`["deploy"]`), maybe none. */
  readonly shortNames: readonly string[];
  /** Categories (`["all"]`), maybe none. */
  readonly categories: readonly string[];
  /** True for namespaced resources, false for cluster-scoped ones (nodes, namespaces...). */
  readonly namespaced: boolean;
  /** The verbs it serves: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`... */
  readonly verbs: readonly string[];
  /** Its subresources: `["scale", "status"]`, maybe none. */
  readonly subresources: readonly string[];
}

/**
 * One group version whose discovery document could not be read (an
 * aggregated API that is down answers 503, or is listed as stale): its
 * resources are missing from the discovery, as kubectl warns and goes on.
 */
export interface DiscoveryFailure {
  /** `"metrics.k8s.io/v1beta1"` (`"v1"` for the core group). */
  readonly groupVersion: string;
  /** Why: the request's typed error (`KubeStatusError`...), or an `Error` saying the group is stale. */
  readonly error: Error;
}
