/**
 * What a lister-watcher serves, as checkpoints record it.
 *
 * @module
 */

/**
 * Which objects a {@linkcode ListerWatcher} lists and watches, and where
 * from: what a checkpoint must match to be loaded into a store (a state of
 * another cluster, resource or selection would silently corrupt it).
 * Selectors are kept as given; compare them normalized.
 */
export interface ResourceIdentity {
  /** The API server's URL (origin and path prefix; never credentials). */
  server: string;
  /** `"v1"`, `"apps/v1"`, ... */
  apiVersion: string;
  /** The plural resource name, e.g. `"configmaps"`. */
  resource: string;
  /** The namespace, or absent for all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  /** The label selector, if any. */
  labelSelector?: string;
  /** The field selector, if any. */
  fieldSelector?: string;
  /** Whether only metadata (`PartialObjectMetadata`) is listed and watched. */
  metadataOnly?: boolean;
  /**
   * The cluster's identity: the `kube-system` namespace's UID, which a new
   * cluster (or a new etcd) never shares; absent when it cannot be read.
   */
  cluster?: string;
}
