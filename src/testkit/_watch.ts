/**
 * WATCH, as kube-apiserver's watch cache serves it: `resourceVersion` ""
 * or "0" starts with a synthetic ADDED per current object; `N` replays
 * every retained change after `N` (or answers 410 Expired once `N` was
 * compacted away); then live changes; bookmarks when allowed; a clean end
 * at `timeoutSeconds`. `resourceVersionMatch` makes 1.20 answer 422; with
 * `streamingList` the server instead supports `sendInitialEvents=true`.
 *
 * @module
 */
import type { ServerContext } from "./_context.ts";
import { chunkedWriter, plainWriter } from "./_body_writer.ts";
import type { Reply } from "./_reply.ts";
import type { Resource } from "./_resources.ts";
import { queryFlag } from "./_router.ts";
import {
  badRequest,
  invalidListOptions,
  statusForCode,
  watchResourceVersionMatchForbidden,
  watchTooOld,
  watchTooOldStatus,
} from "./_status.ts";
import type { View } from "./_view.ts";
import { bookmarkLine, changeLine, eventLine } from "./_watch_events.ts";
import { type StreamFault, WatchSession } from "./_watch_session.ts";
import type { Fault } from "./fault.ts";

/** One watch request, parsed. */
export interface WatchRequest {
  resource: Resource;
  namespace?: string;
  query: URLSearchParams;
  view: View;
  /** A stream fault or `chunked` (status faults and request-time resets are handled before). */
  fault?: Fault;
}

/** Serves one WATCH request. */
export function serveWatch(ctx: ServerContext, reply: Reply, req: WatchRequest): void {
  const { store, behaviour } = ctx;
  const { query, view, resource, namespace, fault } = req;
  const rvText = query.get("resourceVersion") ?? "";
  const match = query.get("resourceVersionMatch") ?? "";
  const allowBookmarks = queryFlag(query.get("allowWatchBookmarks"));
  if (rvText !== "" && !/^\d+$/.test(rvText)) {
    return reply.status(badRequest(`invalid resource version: ${JSON.stringify(rvText)}`));
  }
  const streaming = behaviour.streamingList && queryFlag(query.get("sendInitialEvents"));
  if (streaming) {
    const errors = [];
    if (match !== "NotOlderThan") {
      errors.push({
        field: "resourceVersionMatch",
        message:
          "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
      });
    }
    if (!allowBookmarks) {
      errors.push({
        field: "allowWatchBookmarks",
        message: "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
      });
    }
    if (errors.length) return reply.status(invalidListOptions(errors));
  } else if (match !== "") {
    return reply.status(watchResourceVersionMatchForbidden(rvText !== ""));
  }

  const rv = Number(rvText || 0);
  let initial: string[];
  let expired = false;
  if (streaming || rv === 0) {
    const objects = store.list(resource, namespace).filter(view.matches);
    initial = objects.map((o) => eventLine("ADDED", view.show(o)));
    if (streaming) initial.push(bookmarkLine(view, store.resourceVersion, true));
  } else {
    const events = store.watchEventsSince(rv);
    if (!events && behaviour.expiredWatch === "status") {
      return reply.status(watchTooOldStatus(rv, store.compactedResourceVersion));
    }
    expired = !events;
    initial = expired ? [eventLine("ERROR", watchTooOld())] : [];
    for (const event of events ?? []) {
      const line = event.resource.id === resource.id ? changeLine(event, view) : undefined;
      if (line) initial.push(line);
    }
  }

  const timeoutSeconds = Number(query.get("timeoutSeconds") || 0);
  const seconds = timeoutSeconds > 0 ? timeoutSeconds : behaviour.defaultWatchTimeoutSeconds;
  let unsubscribe = () => {};
  const session = new WatchSession({
    reply,
    writer: (signal) =>
      fault?.kind === "chunked"
        ? chunkedWriter(reply.res, fault, signal)
        : plainWriter(reply.res, signal),
    resource,
    view,
    sinceRv: Math.max(rv, store.resourceVersion),
    currentRv: () => store.resourceVersion,
    allowBookmarks,
    bookmarkIntervalMs: behaviour.bookmarkIntervalMs,
    durationMs: Math.min(seconds * 1000, behaviour.maxWatchMs),
    fault: fault?.kind === "chunked" ? undefined : fault as StreamFault | undefined,
    statusFor: (code, message) =>
      statusForCode(
        code,
        { verb: "watch", resource: resource.resource, namespace },
        undefined,
        message,
      ),
    onClose: (s) => {
      unsubscribe();
      ctx.watchEnded(s);
    },
  });
  if (reply.finished) return;
  unsubscribe = store.subscribe((event) => session.offer(event));
  ctx.watchStarted(session);
  session.start(initial);
  if (expired) session.end();
}
