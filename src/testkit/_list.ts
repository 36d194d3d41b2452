/**
 * LIST, with kube-apiserver 1.20's resourceVersion semantics:
 *
 * - from the watch cache (`resourceVersion=0`, or `N` without `limit`, or
 *   `resourceVersionMatch=NotOlderThan`): the current state in one page
 *   (`limit` ignored), after waiting `tooLargeDelayMs` for a future `N`
 *   and then answering 504 ResourceVersionTooLarge;
 * - from etcd (`resourceVersion=""`, `Exact`, or `N` with `limit`): the
 *   state at that version (410 once compacted), paginated with `limit`
 *   and `continue` over one snapshot; `remainingItemCount` on every page
 *   but the last when no selector narrows the list.
 *
 * @module
 */
import type { KubeObject, ListMeta, Status } from "../api/types.ts";
import { encodeJson } from "./_json.ts";
import { chunkedWriter } from "./_body_writer.ts";
import { type ServerContext, waitForResourceVersion } from "./_context.ts";
import {
  decodeContinue,
  encodeContinue,
  indexAfter,
  type Snapshot,
} from "./_continue_snapshots.ts";
import { objectKey } from "./_object_store.ts";
import type { Reply } from "./_reply.ts";
import type { Resource } from "./_resources.ts";
import {
  badRequest,
  continueExpired,
  invalidListOptions,
  listTooOld,
  tooLargeResourceVersion,
} from "./_status.ts";
import type { View } from "./_view.ts";
import type { Fault } from "./fault.ts";

/** One list request, parsed. */
export interface ListRequest {
  resource: Resource;
  namespace?: string;
  query: URLSearchParams;
  view: View;
  /** A body-shaping fault (status and request-time resets are handled before). */
  fault?: Fault;
  /** Aborts when the client goes away or the server closes. */
  signal: AbortSignal;
}

interface Page {
  rv: number;
  items: KubeObject[];
  continue?: string;
  remaining?: number;
}

/** Serves one LIST request. */
export async function serveList(ctx: ServerContext, reply: Reply, req: ListRequest): Promise<void> {
  const limitText = req.query.get("limit") ?? "";
  if (limitText !== "" && !/^\d+$/.test(limitText)) {
    return reply.status(badRequest(`invalid limit: ${JSON.stringify(limitText)}`));
  }
  const limit = Number(limitText || 0);
  const token = req.query.get("continue") ?? "";
  const page = token ? continuePage(ctx, req, token, limit) : await firstPage(ctx, req, limit);
  if (!("items" in page)) return reply.status(page);
  if (req.signal.aborted) return;
  const metadata: ListMeta = { resourceVersion: String(page.rv) };
  if (page.continue) metadata.continue = page.continue;
  if (page.remaining !== undefined) metadata.remainingItemCount = page.remaining;
  const body = {
    kind: req.view.listKind,
    apiVersion: req.view.listApiVersion,
    metadata,
    items: page.items.map(req.view.item),
  };
  await sendBody(reply, encodeJson(body, reply.pretty), req.fault, req.signal);
}

async function firstPage(
  ctx: ServerContext,
  req: ListRequest,
  limit: number,
): Promise<Page | Status> {
  const { store, behaviour } = ctx;
  const rvText = req.query.get("resourceVersion") ?? "";
  const match = req.query.get("resourceVersionMatch") ?? "";
  if (rvText !== "" && !/^\d+$/.test(rvText)) {
    return badRequest(`invalid resource version: ${JSON.stringify(rvText)}`);
  }
  if (match !== "" && match !== "NotOlderThan" && match !== "Exact") {
    return invalidListOptions([{
      field: "resourceVersionMatch",
      message: `Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    }]);
  }
  if (match !== "" && rvText === "") {
    return invalidListOptions([{
      field: "resourceVersionMatch",
      message: "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    }]);
  }
  const rv = Number(rvText || 0);
  const fromCache = rvText !== "" && match !== "Exact" &&
    (rv === 0
      ? !(behaviour.paginateResourceVersionZero && limit > 0)
      : limit === 0 || match === "NotOlderThan");
  if (rv > store.resourceVersion) {
    const reached = await waitForResourceVersion(store, rv, behaviour.tooLargeDelayMs, req.signal);
    if (!reached) return tooLargeResourceVersion(rvText, store.resourceVersion);
  }
  if (fromCache) {
    const items = store.list(req.resource, req.namespace).filter(req.view.matches);
    return { rv: store.resourceVersion, items };
  }
  const snapshotRv = rv === 0 ? store.resourceVersion : rv;
  const objects = store.listAt(req.resource, req.namespace, snapshotRv);
  if (!objects) return listTooOld();
  return paginate(ctx, req, snapshot(req, snapshotRv, objects), 0, limit);
}

function continuePage(
  ctx: ServerContext,
  req: ListRequest,
  text: string,
  limit: number,
): Page | Status {
  const rvText = req.query.get("resourceVersion") ?? "";
  if (rvText !== "" && rvText !== "0") {
    return badRequest("specifying resource version is not allowed when using continue");
  }
  const token = decodeContinue(text);
  if (!token) return badRequest(`invalid continue token: ${JSON.stringify(text)}`);
  if (token.rv === -1) {
    const { store } = ctx;
    const current = snapshot(req, store.resourceVersion, store.list(req.resource, req.namespace));
    return paginate(ctx, req, current, indexAfter(current.keys, token.start), limit);
  }
  const snap = ctx.snapshots.get(snapshotKey(req, token.rv));
  if (!snap) return continueExpired(encodeContinue({ rv: -1, start: token.start }));
  return paginate(ctx, req, snap, indexAfter(snap.keys, token.start), limit, true);
}

/** The matching objects of a state, with their keys relative to the listed namespace (as etcd's are). */
function snapshot(req: ListRequest, rv: number, objects: KubeObject[]): Omit<Snapshot, "created"> {
  const items = objects.filter(req.view.matches);
  const keys = items.map((o) =>
    req.namespace === undefined
      ? objectKey(req.resource, o.metadata.namespace, o.metadata.name ?? "")
      : o.metadata.name ?? ""
  );
  return { rv, keys, items };
}

/** Identifies the snapshot of one query at one resourceVersion. */
function snapshotKey(req: ListRequest, rv: number): string {
  const q = req.query;
  const parts = [req.resource.id, req.namespace ?? "", q.get("labelSelector") ?? ""];
  parts.push(q.get("fieldSelector") ?? "", req.view.listKind, String(rv));
  return parts.join("\u0000");
}

function paginate(
  ctx: ServerContext,
  req: ListRequest,
  snap: Omit<Snapshot, "created">,
  from: number,
  limit: number,
  kept = false,
): Page {
  const end = limit > 0 ? Math.min(snap.items.length, from + limit) : snap.items.length;
  const page: Page = { rv: snap.rv, items: snap.items.slice(from, end) };
  if (end >= snap.items.length) return page;
  if (!kept) ctx.snapshots.add(snapshotKey(req, snap.rv), snap);
  page.continue = encodeContinue({ rv: snap.rv, start: `${snap.keys[end - 1]}\u0000` });
  if (!req.view.selective) page.remaining = snap.items.length - end;
  return page;
}

/** Writes the list body, shaped by the fault if there is one. */
async function sendBody(
  reply: Reply,
  text: string,
  fault: Fault | undefined,
  signal: AbortSignal,
): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  const half = bytes.subarray(0, Math.floor(bytes.length / 2));
  switch (fault?.kind) {
    case "chunked":
      reply.head(200);
      await chunkedWriter(reply.res, fault, signal).write(bytes);
      return reply.end();
    case "stall":
      reply.head(200, { "Content-Length": `${bytes.length}` });
      reply.res.write(half);
      return;
    case "close":
      reply.head(200);
      reply.res.write(half);
      return reply.end();
    case "reset":
      reply.head(200, { "Content-Length": `${bytes.length}` });
      reply.res.write(half, () => reply.reset());
      return;
    case "raw": {
      const raw = typeof fault.data === "string"
        ? new TextEncoder().encode(fault.data)
        : fault.data;
      return reply.bytes(200, "application/json", raw);
    }
    default:
      return reply.bytes(200, "application/json", bytes);
  }
}
