/**
 * Wire types of the Kubernetes REST API, as far as a reflector needs them.
 *
 * Objects stay plain JSON: the reflector never copies or re-shapes what the
 * server sent, so any resource (built-in or custom) fits `KubeObject`.
 *
 * @module
 */

/**
 * The `metadata` of every Kubernetes object (a subset: the fields the
 * reflector and the cache read; all others are kept untouched).
 *
 * @example
 * ```ts
 * import type { ObjectMeta } from "./types.ts";
 * const meta: ObjectMeta = { name: "cm1", namespace: "default", resourceVersion: "42" };
 * ```
 */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
  finalizers?: string[];
  managedFields?: unknown[];
  [field: string]: unknown;
}

/**
 * Any Kubernetes object: `apiVersion`, `kind`, `metadata`, and whatever else
 * the resource carries.
 *
 * @example
 * ```ts
 * import type { KubeObject } from "./types.ts";
 * const cm: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" }, data: {} };
 * ```
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/**
 * The `metadata` of a list response.
 *
 * @example
 * ```ts
 * import type { ListMeta } from "./types.ts";
 * const meta: ListMeta = { resourceVersion: "195", continue: "eyJ2Ijo..." };
 * ```
 */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  [field: string]: unknown;
}

/**
 * A list response (`ConfigMapList`, `DeploymentList`, ...).
 *
 * @example
 * ```ts
 * import type { KubeList } from "./types.ts";
 * const list: KubeList = { kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] };
 * ```
 */
export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/**
 * One cause inside `Status.details.causes`.
 *
 * @example
 * ```ts
 * import type { StatusCause } from "./types.ts";
 * const cause: StatusCause = { reason: "ResourceVersionTooLarge", message: "Too large resource version" };
 * ```
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/**
 * The `Status` object the API server sends with every failure, and inside
 * watch ERROR events.
 *
 * @example
 * ```ts
 * import type { Status } from "./types.ts";
 * const gone: Status = { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410 };
 * ```
 */
export interface Status {
  kind?: "Status" | string;
  apiVersion?: string;
  metadata?: ListMeta;
  status?: "Success" | "Failure" | string;
  message?: string;
  reason?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
  code?: number;
}

/** The five watch event types of the Kubernetes watch protocol. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * One event of a watch stream, as decoded from one line of the response.
 * ERROR events carry a {@linkcode Status}; the others carry an object
 * (for BOOKMARK only `metadata.resourceVersion` is meaningful).
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "./types.ts";
 * const ev: WatchEvent = { type: "BOOKMARK", object: { kind: "ConfigMap", metadata: { resourceVersion: "198" } } };
 * ```
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK"; object: T }
  | { type: "ERROR"; object: Status };

/** The annotation a streaming list puts on the bookmark that ends the initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end";
