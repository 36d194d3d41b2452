import { KubeNetworkError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeList, KubeObject, WatchEvent } from "../api/types.ts";
import type { KubeClient } from "./kube_client.ts";
import { decodeListStream, ListDecodeError } from "./list_stream.ts";
import type { ListerWatcher, ListOptions, WatchOptions } from "./lister_watcher.ts";
import { resourcePath } from "./resource_path.ts";
import { watchStream } from "./watch_stream.ts";

/**
 * Options of {@linkcode resourceListerWatcher}.
 *
 * @example
 * ```ts
 * import { KubeClient } from "./kube_client.ts";
 * import {
 *   resourceListerWatcher,
 *   type ResourceListerWatcherOptions,
 * } from "./resource_lister_watcher.ts";
 * const options: ResourceListerWatcherOptions = {
 *   apiVersion: "apps/v1",
 *   resource: "deployments",
 *   namespace: "prod",
 *   labelSelector: "app=web",
 *   metadataOnly: true,
 * };
 * const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:8001" }), options);
 * ```
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

/**
 * The {@linkcode ListerWatcher} of one resource through a
 * {@linkcode KubeClient}: `GET` lists with `limit`/`continue`/
 * `resourceVersion`, decoded item by item by `decodeListStream` (a large
 * unpaginated list never exists as one string next to its objects), and
 * `GET ?watch=1` decoded by `watchStream`.
 *
 * @example
 * ```ts
 * import { KubeClient, resourceListerWatcher } from "../../mod.ts";
 * const client = new KubeClient({ server: "http://127.0.0.1:8001" });
 * const lw = resourceListerWatcher(client, { apiVersion: "apps/v1", resource: "deployments", namespace: "prod" });
 * const list = await lw.list({ resourceVersion: "0", limit: 500 });
 * console.log(list.metadata.resourceVersion, list.items.length);
 * ```
 */
export function resourceListerWatcher<T extends KubeObject = KubeObject>(
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
  const path = resourcePath({ apiVersion, resource, namespace });

  const baseQuery = (): URLSearchParams => {
    const q = new URLSearchParams();
    if (labelSelector) q.set("labelSelector", labelSelector);
    if (fieldSelector) q.set("fieldSelector", fieldSelector);
    return q;
  };

  return {
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
      try {
        return await decodeListStream<T>(res.body, {
          signal: opts.signal,
          maxItemLength: maxEventLength,
        });
      } catch (err) {
        if (err instanceof ListDecodeError) {
          throw invalid(
            err.problem === "shape"
              ? `response body is not a Kubernetes list (at character ${err.offset})`
              : `response body is not valid JSON (${err.problem} at character ${err.offset}, after ${err.items} items)`,
          );
        }
        if (err instanceof KubeNetworkError) throw new KubeNetworkError(request, err.cause);
        throw err;
      }
    },
    async *watch(opts: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined> {
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
        signal: opts.signal,
      });
      if (!res.body) return;
      yield* watchStream<T>(res.body, { signal: opts.signal, maxEventLength });
    },
  };
}
