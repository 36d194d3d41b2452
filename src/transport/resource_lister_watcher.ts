import { clusterUid } from "./_cluster_uid.ts";
import type { ResourceIdentity } from "./resource_identity.ts";
import { KubeNetworkError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeList, KubeObject, KubeObjectLike, WatchEvent } from "../api/types.ts";
import type { KubeClient } from "./kube_client.ts";
import { decodeListStream } from "./list_stream.ts";
import { ListDecodeError } from "../api/list_decode_error.ts";
import type { ListerWatcher, ListOptions, WatchOptions } from "./lister_watcher.ts";
import { resourcePath } from "./resource_path.ts";
import { serverFeatures } from "./server_features.ts";
import { watchBatches } from "./watch_stream.ts";
import { checkApiResource } from "../discovery/_check_api_resource.ts";

/**
 * Options of {@linkcode resourceListerWatcher}.
 */
export interface ResourceListerWatcherOptions {
  /** `"v1"` for core resources, `"GROUP/VERSION"` otherwise. Required. */
  apiVersion: string;
  /** Plural resource name (`"configmaps"`). Required. */
  resource: string;
  /** Only this namespace. Default: every namespace (or a cluster-scoped resource). */
  namespace?: string;
  /** A label selector (`"app=web,tier!=db"`). Default: everything. */
  labelSelector?: string;
  /** A field selector (`"metadata.name=x"`). Default: everything. */
  fieldSelector?: string;
  /**
   * Ask for `PartialObjectMetadata` (metadata only, much smaller) instead of
   * full objects. Objects then have kind `PartialObjectMetadata`. Default: `false`.
   */
  metadataOnly?: boolean;
  /**
   * The longest watch event, or list item, accepted (see `watchStream` and
   * `decodeListStream`). Default: 32 Mi code units.
   */
  maxEventLength?: number;
}

const META_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
const META_ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
/** The `request` of the errors `watchStream` makes from a bare Status line. */
const WATCH_STREAM = "watch stream";

/**
 * What a decoded list body must be before anyone reads it: never a
 * `Status` (a list is never one: whatever its `status`, it becomes the
 * {@linkcode KubeStatusError} it stands for, with the Status's code when
 * that is 400 to 599, else 500), with `metadata` an object (the API
 * server always sends one: a body without it is not a list) whose
 * `resourceVersion` and `continue` are strings when present (`null` reads
 * as absent, as Go's JSON decoding has it). `items` entries are not judged
 * here: the watcher reports and drops the ones that are not objects.
 */
function checkList<T extends KubeObjectLike>(
  list: KubeList<T>,
  request: string,
  invalid: (what: string) => KubeStatusError,
): KubeList<T> {
  if ((list as { kind?: unknown }).kind === "Status") {
    const { items, ...status } = list as unknown as Record<string, unknown>;
    // `items: []` was added by the decoder when the body had none.
    const body = Array.isArray(items) && items.length === 0 ? status : { ...status, items };
    throw KubeStatusError.fromStatus(body, { request });
  }
  const meta: unknown = list.metadata;
  if (meta === undefined || meta === null) {
    // The API server always writes it: a body without it is something else (`{}`, a watch event...).
    throw invalid("response body is not a Kubernetes list (no metadata)");
  }
  if (typeof meta !== "object" || Array.isArray(meta)) {
    throw invalid("response body is not a Kubernetes list (metadata is not an object)");
  }
  for (const field of ["resourceVersion", "continue"]) {
    const value = (meta as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw invalid(`response body is not a Kubernetes list (metadata.${field} is not a string)`);
    }
  }
  return list;
}

/**
 * The {@linkcode ListerWatcher} of one resource through a
 * {@linkcode KubeClient}: `GET` lists with `limit`/`continue`/
 * `resourceVersion`, decoded item by item by `decodeListStream` (a large
 * unpaginated list never exists as one string next to its objects), and
 * `GET ?watch=1` decoded by `watchStream`. Every malformed answer becomes
 * a typed error naming the request. A body that is not a list (not JSON,
 * cut short, not valid UTF-8, `items` not an array, no `metadata` object,
 * `metadata.resourceVersion` or `metadata.continue` not a string) is a
 * {@linkcode KubeStatusError} with the HTTP code that describes it; a list
 * body that is a `Status`, or a watch line that is a bare `Status`, is the
 * {@linkcode KubeStatusError} that Status stands for. List items are not
 * judged (the watcher reports and drops those that are not objects).
 *
 * @example List, then watch from the list's version
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const web = {
 *   apiVersion: "apps/v1",
 *   kind: "Deployment",
 *   metadata: { name: "web", namespace: "prod" },
 * };
 * server.create(web);
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "apps/v1",
 *   resource: "deployments",
 *   namespace: "prod",
 * });
 * const list = await lw.list({ resourceVersion: "0", limit: 500 });
 * assert.deepEqual(list.items.map((d) => d.metadata.name), ["web"]);
 * server.delete(web);
 * for await (const ev of lw.watch({ resourceVersion: list.metadata.resourceVersion })) {
 *   assert.equal(ev.type, "DELETED");
 *   break; // leaving the loop closes the watch
 * }
 * await server.close();
 * ```
 *
 * @throws {TypeError} when `apiVersion` is neither a core version (`"v1"`)
 *   nor `"GROUP/VERSION"` (a bare group such as `"apps"` is refused: it
 *   would read `/api/apps/...`), or the resource or namespace is malformed,
 *   or (given an `ApiResource` from discovery) a namespace is given for a
 *   cluster-scoped resource.
 * @throws {ResourceVerbError} given an `ApiResource` whose verbs lack
 *   `list` or `watch`.
 */
export function resourceListerWatcher<T extends KubeObjectLike = KubeObject>(
  client: KubeClient,
  options: ResourceListerWatcherOptions,
): ListerWatcher<T> {
  const {
    apiVersion,
    resource,
    namespace,
    labelSelector,
    fieldSelector,
    metadataOnly = false,
    maxEventLength,
  } = options;
  checkApiResource("resourceListerWatcher", options, ["list", "watch"]);
  const path = resourcePath({ apiVersion, resource, namespace });

  const baseQuery = (): URLSearchParams => {
    const q = new URLSearchParams();
    if (labelSelector) q.set("labelSelector", labelSelector);
    if (fieldSelector) q.set("fieldSelector", fieldSelector);
    return q;
  };

  const features = serverFeatures(client.server);
  const lw: ListerWatcher<T> = {
    features,
    async serverVersion({ signal }: { signal?: AbortSignal }): Promise<void> {
      await client.version({ signal }).catch(() => {});
    },
    async identity({ signal }: { signal?: AbortSignal }): Promise<ResourceIdentity> {
      const server = new URL(client.server.href);
      server.username =
        server.password =
        server.search =
        server.hash =
          "";
      const cluster = await clusterUid(client, { signal });
      return {
        server: server.href.replace(/\/$/, ""),
        apiVersion,
        resource,
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
        ...(fieldSelector ? { fieldSelector } : {}),
        ...(metadataOnly ? { metadataOnly } : {}),
        ...(cluster ? { cluster } : {}),
      };
    },
    async list(opts: ListOptions): Promise<KubeList<T>> {
      const q = baseQuery();
      if (opts.resourceVersion !== undefined && !opts.continue) {
        q.set("resourceVersion", opts.resourceVersion);
      }
      if (opts.resourceVersionMatch && !opts.continue) {
        q.set("resourceVersionMatch", opts.resourceVersionMatch);
      }
      if (opts.limit) q.set("limit", String(opts.limit));
      if (opts.continue) q.set("continue", opts.continue);
      const res = await client.request(path, {
        query: q,
        accept: metadataOnly ? META_LIST : "application/json",
        signal: opts.signal,
      });
      const request = `GET ${path}`;
      const invalid = (what: string) =>
        new KubeStatusError({ code: res.status, request, bodyDescription: what });
      if (!res.body) throw invalid("response body is not valid JSON (empty body)");
      let list: KubeList<T>;
      try {
        list = await decodeListStream<T>(res.body, {
          signal: opts.signal,
          maxItemLength: maxEventLength,
          reuse: opts.reuse as ((item: unknown) => unknown) | undefined,
        });
      } catch (err) {
        if (err instanceof ListDecodeError) {
          throw invalid(
            err.problem === "shape"
              ? `response body is not a Kubernetes list (at character ${err.offset})`
              : err.problem === "encoding"
              ? `response body is not valid UTF-8 (at character ${err.offset}, after ${err.items} items)`
              : `response body is not valid JSON (${err.problem} at character ${err.offset}, after ${err.items} items)`,
          );
        }
        if (err instanceof KubeNetworkError) throw new KubeNetworkError(request, err.cause);
        throw err;
      }
      return checkList(list, request, invalid);
    },
    async *watch(opts: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined> {
      for await (const batch of lw.watchBatches!(opts)) {
        for (const ev of batch) yield ev;
      }
    },
    async *watchBatches(opts: WatchOptions): AsyncGenerator<WatchEvent<T>[], void, undefined> {
      const q = baseQuery();
      q.set("watch", "1");
      if (opts.resourceVersion !== undefined) q.set("resourceVersion", opts.resourceVersion);
      if (opts.resourceVersionMatch) q.set("resourceVersionMatch", opts.resourceVersionMatch);
      if (opts.allowWatchBookmarks) q.set("allowWatchBookmarks", "true");
      if (opts.sendInitialEvents) q.set("sendInitialEvents", "true");
      if (opts.timeoutSeconds !== undefined) q.set("timeoutSeconds", String(opts.timeoutSeconds));
      const res = await client.request(path, {
        query: q,
        accept: metadataOnly ? META_ONE : "application/json",
        // Uncompressed: kube-apiserver 1.37 ends a compressed watch's gzip
        // stream after a streaming list's initial events and goes on in a
        // second gzip member, which fetch's decoders (Deno's, curl's) drop:
        // the end bookmark and every later event would be lost. Watch
        // events are small and must arrive at once anyway.
        acceptEncoding: "identity",
        signal: opts.signal,
      });
      opts.onConnected?.();
      if (!res.body) return;
      try {
        yield* watchBatches<T>(res.body, { signal: opts.signal, maxEventLength });
      } catch (err) {
        // A bare Status line: name the request, as for every other failure of this watch.
        if (err instanceof KubeStatusError && err.request === WATCH_STREAM) {
          throw new KubeStatusError({
            code: err.code,
            request: `GET ${path}`,
            status: err.status,
            retryAfterMs: err.retryAfterMs,
          });
        }
        throw err;
      }
    },
  };
  return lw;
}
