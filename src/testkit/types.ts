/**
 * The data types of the test kit's public API: resource definitions,
 * object references, the request log and wait options.
 *
 * @module
 */

/**
 * A resource the fake API server serves. `v1 configmaps`, `v1 secrets`,
 * `v1 pods`, `v1 namespaces` (cluster-scoped) and `apps/v1 deployments`
 * are known from the start; add others with
 * {@linkcode FakeApiServer.addResource}.
 */
export interface ResourceDefinition {
  /** API group, `""` for the core group (`/api/v1`). */
  group: string;
  /** API version inside the group, such as `"v1"`. */
  version: string;
  /** Plural resource name used in paths, such as `"configmaps"`. */
  resource: string;
  /** Kind of one object, such as `"ConfigMap"`; lists are `kind + "List"`. */
  kind: string;
  /** Whether objects live in namespaces. */
  namespaced: boolean;
  /** The singular name discovery gives. Default: the lower-cased kind. */
  singular?: string;
  /** The short names discovery gives (`["deploy"]`). Default: `[]` (the defaults have kubectl's: `cm`, `po`, `ns`, `deploy`, `ev`). */
  shortNames?: string[];
  /** The categories discovery gives (`["all"]`). Default: `[]`. */
  categories?: string[];
  /**
   * The verbs served (and given by discovery); a request of another verb
   * gets 405 MethodNotAllowed, as from the real server (`["create"]` for a
   * resource like `bindings`). Default: `get`, `list`, `watch`, `create`,
   * `update`, `patch`, `delete`.
   */
  verbs?: string[];
}

/**
 * Names one object: its type by `apiVersion` and `kind`, and its key.
 */
export interface ObjectRef {
  /** `"v1"`, `"apps/v1"`... */
  apiVersion: string;
  /** `"ConfigMap"`... */
  kind: string;
  /** Required for namespaced kinds, ignored for cluster-scoped ones. */
  namespace?: string;
  /** The object's name. */
  name: string;
}

/**
 * Selects the objects of one resource, optionally in one namespace.
 */
export interface ObjectsQuery {
  /** Plural resource name, such as `"configmaps"`. */
  resource: string;
  /** API group; default: the first known resource with that plural name. */
  group?: string;
  /** Only this namespace; default: all namespaces. */
  namespace?: string;
}

/**
 * What a request asked for, as the API server's request-info resolver
 * names it (`"unknown"`: anything else, such as a path outside the API).
 */
export type RequestVerb =
  | "list"
  | "watch"
  | "get"
  | "create"
  | "update"
  | "patch"
  | "delete"
  | "unknown";

/**
 * One request the fake API server received, in arrival order.
 */
export interface RecordedRequest {
  /** Arrival number since the server started (1, 2, ...); `clearRequests` does not reset it. */
  seq: number;
  /** `"GET"`, `"POST"`... */
  method: string;
  /** Path without the query, such as `"/api/v1/namespaces/fx/configmaps"`. */
  path: string;
  /** The query parameters. */
  query: URLSearchParams;
  /** What the request asked for. */
  verb: RequestVerb;
  /** Plural resource name, when the path names a known resource. */
  resource?: string;
  /** The API group (`""` for the core group), when the path names one. */
  group?: string;
  /** The namespace in the path. */
  namespace?: string;
  /** The object name in the path. */
  name?: string;
  /** The `Authorization` header as sent. */
  authorization?: string;
  /** The `Accept` header as sent. */
  accept?: string;
  /** The `Accept-Encoding` header, when sent. */
  acceptEncoding?: string;
  /** The `Content-Type` header, when sent (a PATCH's tells its patch type). */
  contentType?: string;
  /** `Date.now()` at arrival. */
  at: number;
  /** The HTTP status once answered (`undefined` while unanswered, or when the connection was reset). */
  status?: number;
}

/**
 * How long a `waitFor...` call may wait.
 */
export interface WaitOptions {
  /** Rejects with `signal.reason` when aborted. Default: none. */
  signal?: AbortSignal;
  /** Rejects with an `Error` after this many milliseconds. Default: `10_000`; `Infinity` waits forever. */
  timeoutMs?: number;
}
