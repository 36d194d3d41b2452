import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { isExpired } from "../api/predicates.ts";
import type { KubeList, KubeObject, KubeObjectLike } from "../api/types.ts";
import type { ListerWatcher, ListOptions } from "../transport/lister_watcher.ts";

/**
 * Options of {@linkcode listAllPages}.
 */
export interface ListPagerOptions {
  /** The list's `resourceVersion` (`"0"`, `""` or a version). Default: `""`. */
  resourceVersion?: string;
  /** Items per page; `0` asks for one unpaginated list. Default: `500`. */
  pageSize?: number;
  /** Aborts between and during pages. */
  signal?: AbortSignal;
  /** Called after each page with its item count (for metrics and progress). Default: none. */
  onPage?: (items: number) => void;
  /** Handed to every `lw.list` call as `ListOptions.reuse`. Default: none. */
  reuse?: ListOptions["reuse"];
}

/**
 * A complete list: every item of one snapshot and the snapshot's version.
 */
export interface ListResult<T extends KubeObjectLike = KubeObject> {
  /** Every item, in the server's order. */
  items: T[];
  /** The snapshot's version: the list's `metadata.resourceVersion` (`""` when it had none). */
  resourceVersion: string;
  /** The list's `kind` (`"ConfigMapList"`), or `undefined` when the answer had none. */
  kind: string | undefined;
  /** How many pages it took (a restarted list counts its final, full request). */
  pages: number;
}

/**
 * Lists every object of a resource, page by page (`limit`/`continue`), as
 * client-go's `pager.ListPager` does. All pages come from one snapshot; if a
 * continue token expires (410) midway, the pages gathered so far are
 * dropped and the list is redone as ONE unpaginated request at the original
 * resourceVersion, so no result ever mixes two snapshots.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, listAllPages, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * for (const name of ["a", "b", "c"]) {
 *   server.create({
 *     apiVersion: "v1",
 *     kind: "ConfigMap",
 *     metadata: { name, namespace: "default" },
 *   });
 * }
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const { items, pages, resourceVersion } = await listAllPages(lw, { pageSize: 2 });
 * assert.deepEqual(items.map((cm) => cm.metadata.name), ["a", "b", "c"]);
 * assert.equal(pages, 2);
 * assert.equal(resourceVersion, server.resourceVersion);
 * await server.close();
 * ```
 */
export async function listAllPages<T extends KubeObjectLike = KubeObject>(
  lw: ListerWatcher<T>,
  options: ListPagerOptions = {},
): Promise<ListResult<T>> {
  const { resourceVersion = "", pageSize = 500, signal, onPage, reuse } = options;
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw new RangeError(`listAllPages: pageSize must be an integer >= 0, got ${pageSize}`);
  }
  let items: T[] = [];
  let pages = 0;
  let token: string | undefined;
  const seen = new Set<string>();
  let first: KubeList<T> | undefined;
  do {
    signal?.throwIfAborted();
    let page: KubeList<T>;
    try {
      page = await lw.list({
        resourceVersion,
        limit: pageSize || undefined,
        continue: token,
        signal,
        reuse,
      });
    } catch (err) {
      if (token === undefined || !isExpired(err)) throw err;
      items = [];
      page = await lw.list({ resourceVersion, signal, reuse });
      token = undefined;
      seen.clear();
      first = page;
    }
    pages++;
    first ??= page;
    if (
      !page || !Array.isArray(page.items) || typeof page.metadata !== "object" ||
      page.metadata === null
    ) {
      throw new MalformedResponseError(
        "list",
        "not a Kubernetes list (no items array or metadata)",
      );
    }
    onPage?.(page.items.length);
    if (items.length === 0) items = page.items;
    else for (const item of page.items) items.push(item);
    const previous = token;
    token = page.metadata.continue || undefined;
    if (token !== undefined && (typeof token !== "string" || seen.has(token))) {
      // A server (or a proxy dropping `continue`) that hands out the same
      // token again would page forever, holding every page.
      throw new MalformedResponseError(
        "list",
        typeof token !== "string"
          ? "metadata.continue is not a string"
          : "the server sent the same continue token twice",
      );
    }
    if (previous !== undefined) seen.add(previous);
    if (token !== undefined) seen.add(token);
  } while (token);
  return { items, resourceVersion: first.metadata.resourceVersion ?? "", kind: first.kind, pages };
}
