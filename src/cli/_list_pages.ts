/**
 * `get`'s list: pages of `limit` objects (or Table rows) with `continue`,
 * reporting progress (objects so far, and how many the server says remain,
 * `remainingItemCount`); an expired continue token (410) restarts the list
 * once from the start, as client-go's pager does.
 *
 * @module
 */
import type { KubeObjectLike, ListMeta } from "../api/types.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import { isServerTable, type TableColumnDefinition, type TableRow } from "./_table.ts";

/** What was listed: objects, or a server Table's rows (with the objects' metadata). */
export interface Listed {
  /** The server's columns, when it answered with Tables. */
  columns?: TableColumnDefinition[];
  /** One per object; `row` only with a server Table. */
  items: { object: KubeObjectLike; row?: TableRow }[];
  /** The list's resourceVersion. */
  resourceVersion?: string;
}

/** What {@linkcode listPages} needs. */
export interface ListPagesOptions {
  client: KubeClient;
  path: string;
  accept: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize: number;
  signal: AbortSignal;
  /** Called after each page that has another after it. */
  onProgress?: (listed: number, remaining?: number) => void;
}

/** Lists every page. */
export async function listPages(o: ListPagesOptions): Promise<Listed> {
  for (let attempt = 0;; attempt++) {
    try {
      return await listOnce(o);
    } catch (err) {
      // the continue token expired (410) while paging: once more, from the start
      if (attempt === 0 && err instanceof KubeStatusError && err.code === 410) continue;
      throw err;
    }
  }
}

async function listOnce(o: ListPagesOptions): Promise<Listed> {
  const out: Listed = { items: [] };
  let token: string | undefined;
  do {
    const query: Record<string, string> = { limit: String(o.pageSize) };
    if (token) query.continue = token;
    if (o.labelSelector) query.labelSelector = o.labelSelector;
    if (o.fieldSelector) query.fieldSelector = o.fieldSelector;
    const body = await o.client.requestJson<unknown>(o.path, {
      query,
      accept: o.accept,
      signal: o.signal,
    });
    let meta: ListMeta | undefined;
    if (isServerTable(body)) {
      out.columns ??= body.columnDefinitions;
      for (const row of body.rows ?? []) {
        out.items.push({ object: row.object ?? { metadata: {} }, row });
      }
      meta = body.metadata;
    } else {
      const list = body as { items?: KubeObjectLike[] | null; metadata?: ListMeta };
      for (const object of list.items ?? []) out.items.push({ object });
      meta = list.metadata;
    }
    out.resourceVersion = meta?.resourceVersion;
    token = meta?.continue || undefined;
    if (token) o.onProgress?.(out.items.length, meta?.remainingItemCount);
  } while (token);
  return out;
}
