import type { KubeList, KubeObject, KubeObjectLike } from "../api/types.ts";
import type { KubeClient } from "./kube_client.ts";
import { resourcePath, type ResourceRef } from "./resource_path.ts";
import { checkApiResource } from "../discovery/_check_api_resource.ts";

/** The patch types of {@linkcode ResourceClient.patch}, by the content type each is sent as. */
const PATCH_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

const APPLY = "application/apply-patch+yaml";

/**
 * How {@linkcode ResourceClient.patch} patches: `"merge"` (RFC 7386 JSON
 * merge patch: an object whose fields replace the object's, `null`
 * removes), `"json"` (RFC 6902 JSON patch: an array of operations),
 * `"strategic"` (Kubernetes' strategic merge patch: like merge, but lists
 * such as a pod's containers merge by key; built-in resources only).
 */
export type PatchType = "merge" | "json" | "strategic";

/** One RFC 6902 operation of a `"json"` patch. */
export interface JsonPatchOperation {
  /** `"add"`, `"remove"`, `"replace"`, `"move"`, `"copy"` or `"test"`. */
  op: "add" | "remove" | "replace" | "move" | "copy" | "test";
  /** A JSON pointer (`"/metadata/labels/app"`; `~1` stands for `/`). */
  path: string;
  /** The value of `add`, `replace` and `test`. */
  value?: unknown;
  /** The source of `move` and `copy`. */
  from?: string;
}

/** Options every call takes. */
export interface ResourceCallOptions {
  /** Aborts the request: it rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
}

/** Options of the calls naming one object. */
export interface ObjectCallOptions extends ResourceCallOptions {
  /**
   * The object's namespace, for a client whose reference spans all
   * namespaces. Default: the reference's; for create, replace and apply,
   * also the object's `metadata.namespace`.
   */
  namespace?: string;
}

/** Options of the writes. */
export interface WriteOptions extends ObjectCallOptions {
  /** Who makes the change, recorded in `metadata.managedFields`. Default: the server's (from the user agent). */
  fieldManager?: string;
  /** Validate and answer, but store nothing (`dryRun=All`). Default: `false`. */
  dryRun?: boolean;
}

/** Options of {@linkcode ResourceClient.patch}. */
export interface PatchOptions extends WriteOptions {
  /** How the patch reads (see {@linkcode PatchType}). Default: `"merge"`. */
  type?: PatchType;
}

/** Options of {@linkcode ResourceClient.apply}. */
export interface ApplyOptions extends WriteOptions {
  /** The field manager owning the applied fields. Required. */
  fieldManager: string;
  /** Take over fields another manager owns instead of failing with a 409. Default: `false`. */
  force?: boolean;
}

/**
 * Any part of `T`, at every depth (each field optional, arrays of parts):
 * what a server-side apply states, since it names only the fields its
 * manager owns.
 */
export type PartialObject<T> = T extends readonly (infer E)[] ? PartialObject<E>[]
  : T extends object ? { [K in keyof T]?: PartialObject<T[K]> }
  : T;

/**
 * A server-side apply configuration for objects of type `T`
 * ({@linkcode ResourceClient.apply}): any part of `T`. For a typed
 * Deployment, `{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name },
 * spec: { replicas: 2 } }` is one, without the selector and template a
 * whole Deployment requires. `apiVersion`, `kind` and `metadata.name` are
 * required at run time (a `TypeError` without them).
 */
export type ApplyConfiguration<T> = PartialObject<T>;

/** Options of {@linkcode ResourceClient.delete}. */
export interface DeleteOptions extends ObjectCallOptions {
  /** What happens to the dependents: `"Orphan"`, `"Background"` or `"Foreground"`. Default: the resource's. */
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  /** Delete only if the object still has this uid and/or resourceVersion (else a 409 conflict). Default: none. */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Seconds before the object is deleted (pods). Default: the object's. */
  gracePeriodSeconds?: number;
  /** Validate and answer, but delete nothing (`dryRun=All`). Default: `false`. */
  dryRun?: boolean;
}

/** Options of {@linkcode ResourceClient.list} (one page). */
export interface ResourceListOptions extends ResourceCallOptions {
  /** A label selector (`"app=web,tier!=db"`). Default: all. */
  labelSelector?: string;
  /** A field selector (`"metadata.name=a"`). Default: all. */
  fieldSelector?: string;
  /** Page size. Default: everything in one answer. */
  limit?: number;
  /** The continue token of the previous page. Default: the first page. */
  continue?: string;
}

/**
 * Typed reads and writes of one resource; see {@linkcode resourceClient}.
 */
export interface ResourceClient<T extends KubeObjectLike = KubeObject> {
  /** The reference it was made for. */
  readonly ref: Readonly<ResourceRef>;
  /** `GET` one object. */
  get(name: string, options?: ObjectCallOptions): Promise<T>;
  /** `GET` the collection (one page, a consistent read). */
  list(options?: ResourceListOptions): Promise<KubeList<T>>;
  /** `POST` a new object; its namespace is the reference's or its own. */
  create(object: T, options?: WriteOptions): Promise<T>;
  /** `PUT` a new version of `object`; a stale `metadata.resourceVersion` rejects with a `KubeConflictError`. */
  replace(object: T, options?: WriteOptions): Promise<T>;
  /** `PATCH` an object with a merge, JSON or strategic merge patch. */
  patch(name: string, patch: unknown, options?: PatchOptions): Promise<T>;
  /** Server-side apply: `PATCH` with the object as the desired state of `fieldManager`'s fields (creates it when missing). */
  apply(object: ApplyConfiguration<T>, options: ApplyOptions): Promise<T>;
  /** `DELETE` an object. */
  delete(name: string, options?: DeleteOptions): Promise<void>;
}

function nameOf(what: string, name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw new TypeError(`resourceClient.${what}: a name is required`);
  }
  return name;
}

function objectOf(what: string, object: unknown): KubeObject {
  if (object === null || typeof object !== "object" || Array.isArray(object)) {
    throw new TypeError(`resourceClient.${what}: the object must be a Kubernetes object`);
  }
  return object as KubeObject;
}

/**
 * A typed client for one resource, named by the same reference informers
 * use (`{ apiVersion, resource, namespace? }`, or an `ApiResource` from
 * discovery, spread to add a namespace: then a namespace on a
 * cluster-scoped resource is a `TypeError`): `get`, `list`, `create`,
 * `replace`, `patch` (merge, JSON, strategic merge), server-side `apply`
 * and `delete`, each taking a `signal`. Failures reject with a
 * {@linkcode KubeStatusError} (`isNotFound` for a 404, `isAlreadyExists`
 * for a taken name) or, for a 409 because the object changed since it was
 * read, a {@linkcode KubeConflictError}. A write is sent once and never
 * retried: retry conflicts explicitly with {@linkcode retryOnConflict}.
 * Nothing is sent until a call; a malformed reference throws at once, a
 * malformed call (no name, an apply without `fieldManager`, a JSON patch
 * that is not an array) rejects with a `TypeError` before sending. Object
 * names are those the API server takes (`system:controller:job-controller`
 * is a ClusterRole's), sent percent-encoded; only a name that cannot be a
 * path segment is refused: empty, `.`, `..`, or one holding `/` or `%`.
 *
 * @throws {TypeError} when `ref` is malformed (an `apiVersion` that is
 *   neither `"v1"` nor `"GROUP/VERSION"`, such as `"apps"` for
 *   `"apps/v1"`) or names an object.
 *
 * @example Create, patch and apply a ConfigMap
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, type KubeObject, resourceClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * type ConfigMap = KubeObject & { data?: Record<string, string> };
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const configMaps = resourceClient<ConfigMap>(client, {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 *   namespace: "fx",
 * });
 * await configMaps.create({ metadata: { name: "app" }, data: { mode: "a" } });
 * await configMaps.patch("app", { data: { size: "1" } }, { type: "merge" });
 * const applied = await configMaps.apply(
 *   { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "app" }, data: { mode: "b" } },
 *   { fieldManager: "my-controller" },
 * );
 * assert.deepEqual(applied.data, { mode: "b", size: "1" });
 * await server.close();
 * ```
 */
export function resourceClient<T extends KubeObjectLike = KubeObject>(
  client: KubeClient,
  ref: ResourceRef,
): ResourceClient<T> {
  if (ref === null || typeof ref !== "object") {
    throw new TypeError("resourceClient: ref must be { apiVersion, resource, namespace? }");
  }
  if (ref.name !== undefined) {
    throw new TypeError("resourceClient: ref names a resource, not an object (drop `name`)");
  }
  const base: ResourceRef = { apiVersion: ref.apiVersion, resource: ref.resource };
  if (ref.namespace) base.namespace = ref.namespace;
  resourcePath(base); // throws a TypeError for a malformed reference
  checkApiResource("resourceClient", ref, []); // an ApiResource: no namespace if cluster-scoped

  const namespaceFor = (what: string, given: string | undefined, object?: KubeObject) => {
    const own = object?.metadata?.namespace || undefined;
    const ns = given ?? base.namespace ?? own;
    for (const other of [given, base.namespace, own]) {
      if (other !== undefined && other !== ns) {
        throw new TypeError(
          `resourceClient.${what}: namespace ${JSON.stringify(other)} does not match ${
            JSON.stringify(ns)
          }`,
        );
      }
    }
    return ns;
  };
  const pathOf = (namespace: string | undefined, name?: string) =>
    resourcePath({ ...base, namespace, name });
  const writeQuery = (
    options: WriteOptions | DeleteOptions,
    extra: Record<string, string> = {},
  ) => {
    const query: Record<string, string> = {};
    const { fieldManager } = options as WriteOptions;
    if (fieldManager !== undefined) query.fieldManager = fieldManager;
    if (options.dryRun) query.dryRun = "All";
    return { ...query, ...extra };
  };

  return {
    ref: Object.freeze({ ...base }),

    async get(name, options = {}) {
      const { namespace, signal } = options;
      const path = pathOf(namespaceFor("get", namespace), nameOf("get", name));
      return await client.requestJson<T>(path, { signal });
    },

    async list(options = {}) {
      const { labelSelector, fieldSelector, limit, continue: token, signal } = options;
      const query: Record<string, string> = {};
      if (labelSelector) query.labelSelector = labelSelector;
      if (fieldSelector) query.fieldSelector = fieldSelector;
      if (limit !== undefined) {
        if (!Number.isInteger(limit) || limit < 0) {
          throw new RangeError(`resourceClient.list: limit must be an integer >= 0, got ${limit}`);
        }
        query.limit = String(limit);
      }
      if (token) query.continue = token;
      return await client.requestJson<KubeList<T>>(pathOf(base.namespace), { query, signal });
    },

    async create(object, options = {}) {
      const obj = objectOf("create", object);
      const path = pathOf(namespaceFor("create", options.namespace, obj));
      return await client.requestJson<T>(path, {
        method: "POST",
        body: obj,
        query: writeQuery(options),
        signal: options.signal,
      });
    },

    async replace(object, options = {}) {
      const obj = objectOf("replace", object);
      const name = nameOf("replace", obj.metadata?.name);
      const path = pathOf(namespaceFor("replace", options.namespace, obj), name);
      return await client.requestJson<T>(path, {
        method: "PUT",
        body: obj,
        query: writeQuery(options),
        signal: options.signal,
      });
    },

    async patch(name, patch, options = {}) {
      const { type = "merge", namespace, signal } = options;
      const contentType = Object.hasOwn(PATCH_TYPES, type) ? PATCH_TYPES[type] : undefined;
      if (!contentType) {
        throw new TypeError(
          `resourceClient.patch: type must be "merge", "json" or "strategic", got ${
            JSON.stringify(type)
          }`,
        );
      }
      if (type === "json" ? !Array.isArray(patch) : !isPlainObject(patch)) {
        throw new TypeError(
          type === "json"
            ? "resourceClient.patch: a JSON patch is an array of operations"
            : `resourceClient.patch: a ${type} patch is an object`,
        );
      }
      const path = pathOf(namespaceFor("patch", namespace), nameOf("patch", name));
      return await client.requestJson<T>(path, {
        method: "PATCH",
        body: patch,
        contentType,
        query: writeQuery(options),
        signal,
      });
    },

    async apply(object, options) {
      const { fieldManager, force = false, namespace, signal } = options ?? {} as ApplyOptions;
      if (typeof fieldManager !== "string" || fieldManager === "") {
        throw new TypeError("resourceClient.apply: options.fieldManager is required");
      }
      const obj = objectOf("apply", object);
      if (!obj.apiVersion || !obj.kind) {
        throw new TypeError("resourceClient.apply: the object needs apiVersion and kind");
      }
      const name = nameOf("apply", obj.metadata?.name);
      const path = pathOf(namespaceFor("apply", namespace, obj), name);
      return await client.requestJson<T>(path, {
        method: "PATCH",
        body: obj, // JSON is YAML
        contentType: APPLY,
        query: writeQuery(options, force ? { force: "true" } : {}),
        signal,
      });
    },

    async delete(name, options = {}) {
      const { propagationPolicy, preconditions, gracePeriodSeconds, namespace, signal } = options;
      const path = pathOf(namespaceFor("delete", namespace), nameOf("delete", name));
      const body: Record<string, unknown> = { kind: "DeleteOptions", apiVersion: "v1" };
      if (propagationPolicy !== undefined) {
        if (!["Orphan", "Background", "Foreground"].includes(propagationPolicy)) {
          throw new TypeError(
            `resourceClient.delete: propagationPolicy must be "Orphan", "Background" or "Foreground"`,
          );
        }
        body.propagationPolicy = propagationPolicy;
      }
      if (preconditions !== undefined) body.preconditions = preconditions;
      if (gracePeriodSeconds !== undefined) {
        if (!Number.isInteger(gracePeriodSeconds) || gracePeriodSeconds < 0) {
          throw new RangeError("resourceClient.delete: gracePeriodSeconds must be an integer >= 0");
        }
        body.gracePeriodSeconds = gracePeriodSeconds;
      }
      const res = await client.request(path, {
        method: "DELETE",
        body: Object.keys(body).length > 2 ? body : undefined,
        query: writeQuery(options),
        signal,
      });
      await res.body?.cancel().catch(() => {});
    },
  };
}

function isPlainObject(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
