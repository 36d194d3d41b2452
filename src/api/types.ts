/**
 * Wire types of the Kubernetes REST API, as far as a reflector needs them.
 *
 * Objects stay plain JSON: the reflector never copies or re-shapes what the
 * server sent, so any resource (built-in or custom) fits `KubeObject`.
 * Every generic of the library accepts any {@linkcode KubeObjectLike}: the
 * untyped `KubeObject` (the default), your own interfaces, the interfaces
 * of the `kubernetes-types` package and `@kubernetes/client-node`'s models.
 *
 * @module
 */

/**
 * The `metadata` of every Kubernetes object (a subset: the fields the
 * reflector and the cache read; all others are kept untouched).
 */
export interface ObjectMeta {
  /** The object's name, unique per resource and namespace. */
  name?: string;
  /** A prefix the server completes into a unique `name` on create. */
  generateName?: string;
  /** The object's namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** Unique for the object's lifetime: a re-created object gets a new one. */
  uid?: string;
  /** Opaque version of the object, changed by every write. */
  resourceVersion?: string;
  /** Sequence number of the desired state (`spec`), set by the server. */
  generation?: number;
  /** When the object was created (RFC 3339). */
  creationTimestamp?: string | null;
  /** When deletion was requested; the object stays while finalizers remain. */
  deletionTimestamp?: string | null;
  /** Identifying key/value pairs, matched by label selectors. */
  labels?: Record<string, string>;
  /** Non-identifying key/value pairs. */
  annotations?: Record<string, string>;
  /** The objects this one depends on (for garbage collection). */
  ownerReferences?: unknown[];
  /** What must be done before the object is deleted. */
  finalizers?: string[];
  /** Which manager owns which fields (server-side apply); see `dropManagedFields`. */
  managedFields?: unknown[];
  /** Any other metadata field, kept untouched. */
  [field: string]: unknown;
}

/**
 * Any Kubernetes object: `apiVersion`, `kind`, `metadata`, and whatever else
 * the resource carries. The default type argument of every generic: untyped
 * (`obj.spec` is `unknown`); for typed objects see {@linkcode KubeObjectLike}.
 */
export interface KubeObject {
  /** `"v1"` or `"GROUP/VERSION"`; may be absent on list items. */
  apiVersion?: string;
  /** The object's kind (`"ConfigMap"`); may be absent on list items. */
  kind?: string;
  /** The object's metadata. */
  metadata: ObjectMeta;
  /** Every other field of the resource (`spec`, `status`, `data`...). */
  [field: string]: unknown;
}

/**
 * The `metadata` fields the library reads, typed loosely enough that every
 * usual declaration of Kubernetes metadata fits: the library's own
 * {@linkcode ObjectMeta}, `ObjectMeta` of the `kubernetes-types` package and
 * `V1ObjectMeta` of `@kubernetes/client-node`. Fields on which those
 * disagree (`creationTimestamp` is a `Date` in client-node's types, a string
 * in the JSON) are left out on purpose.
 */
export interface ObjectMetaLike {
  /** The object's name, unique per resource and namespace. */
  name?: string;
  /** The object's namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** Unique for the object's lifetime: a re-created object gets a new one. */
  uid?: string;
  /** Opaque version of the object, changed by every write. */
  resourceVersion?: string;
  /** Identifying key/value pairs, matched by label selectors. */
  labels?: { [key: string]: string };
  /** Non-identifying key/value pairs. */
  annotations?: { [key: string]: string };
}

/**
 * What the type parameter of every generic of the library must satisfy:
 * any type of a Kubernetes object, with or without an index signature,
 * with `metadata` optional or required. For example `Deployment` from
 * `kubernetes-types/apps/v1`, `V1Deployment` from `@kubernetes/client-node`,
 * or an interface of your own that extends {@linkcode KubeObject}. Objects
 * the library hands out always carry `metadata` at run time (objects
 * without it are refused when decoded), whatever the type says.
 */
export interface KubeObjectLike {
  /** `"v1"` or `"GROUP/VERSION"`; may be absent on list items. */
  apiVersion?: string;
  /** The object's kind (`"Deployment"`); may be absent on list items. */
  kind?: string;
  /** The object's metadata. */
  metadata?: ObjectMetaLike;
}

/**
 * The `metadata` of a list response.
 */
export interface ListMeta {
  /** The version of the list's snapshot: where a watch can start from. */
  resourceVersion?: string;
  /** The token of the next page; empty or absent on the last page. */
  continue?: string;
  /** How many items follow this page (an estimate, not always sent). */
  remainingItemCount?: number;
  /** Any other list metadata field, kept untouched. */
  [field: string]: unknown;
}

/**
 * A list response (`ConfigMapList`, `DeploymentList`, ...).
 */
export interface KubeList<T extends KubeObjectLike = KubeObject> {
  /** The list's `apiVersion` (`"v1"`, `"apps/v1"`...). */
  apiVersion?: string;
  /** The list's kind (`"ConfigMapList"`). */
  kind?: string;
  /** The list's metadata: its `resourceVersion` and `continue` token. */
  metadata: ListMeta;
  /** The objects of this page. */
  items: T[];
}

/**
 * One cause inside `Status.details.causes`.
 */
export interface StatusCause {
  /** Machine-readable cause (`"ResourceVersionTooLarge"`, `"FieldValueInvalid"`...). */
  reason?: string;
  /** Human-readable description of the cause. */
  message?: string;
  /** The field the cause is about (`"metadata.name"`), when any. */
  field?: string;
}

/**
 * The `Status` object the API server sends with every failure, and inside
 * watch ERROR events.
 */
export interface Status {
  /** Always `"Status"`. */
  kind?: "Status" | string;
  /** Usually `"v1"`. */
  apiVersion?: string;
  /** List metadata, usually empty. */
  metadata?: ListMeta;
  /** `"Success"` or `"Failure"`. */
  status?: "Success" | "Failure" | string;
  /** Human-readable description of the failure. */
  message?: string;
  /** Machine-readable reason (`"Expired"`, `"NotFound"`...); drives recovery. */
  reason?: string;
  /** More about the failure: the object concerned, causes, when to retry. */
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  /** The HTTP status code (`410`...). */
  code?: number;
}

/**
 * The five watch event types of the Kubernetes watch protocol.
 */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * One event of a watch stream, as decoded from one line of the response.
 * ERROR events carry a {@linkcode Status}; the others carry an object
 * (for BOOKMARK only `metadata.resourceVersion` is meaningful).
 */
export type WatchEvent<T extends KubeObjectLike = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: Status };

/**
 * The annotation a streaming list puts on the bookmark that ends the initial events.
 */
export const INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end";
