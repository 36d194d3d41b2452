/**
 * Handles one HTTP request: records it, checks the bearer token, applies
 * an injected fault, then routes it to list, watch or single-object
 * handling, in the order the real server's filter chain does (authn first,
 * then everything else).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerContext } from "./_context.ts";
import { serveCreate, serveDelete, serveGet, servePatch, serveUpdate } from "./_crud.ts";
import type { FaultRules } from "./_fault_rules.ts";
import { serveDiscovery } from "./_serve_discovery.ts";
import { wantsPretty } from "./_json.ts";
import { SelectorError } from "./_label_selector.ts";
import { serveList } from "./_list.ts";
import { Reply } from "./_reply.ts";
import { resolveRoute, type Route } from "./_router.ts";
import {
  badRequest,
  failure,
  methodNotAllowed,
  resourceNotFound,
  statusForCode,
  unauthorized,
} from "./_status.ts";
import { makeView, wantsMetadataOnly } from "./_view.ts";
import { serveWatch } from "./_watch.ts";
import type { Fault } from "./fault.ts";
import type { RecordedRequest } from "./types.ts";

/** What the handler needs from the server. */
export interface HandlerDeps {
  ctx: ServerContext;
  faults: FaultRules;
  /** Whether a connection may serve another request after the current one. */
  keepAlive: () => boolean;
  /** The accepted bearer tokens; undefined accepts every request. */
  tokens: () => ReadonlySet<string> | undefined;
  /** Appends to the request log (assigns `seq`). */
  record: (request: RecordedRequest) => void;
  /** Aborted when the server closes. */
  closing: AbortSignal;
}

/** Serves one request; never rejects (unexpected errors become 500 InternalError). */
export function handleRequest(deps: HandlerDeps, req: IncomingMessage, res: ServerResponse): void {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  deps.closing.addEventListener("abort", onAbort);
  res.once("close", () => {
    deps.closing.removeEventListener("abort", onAbort);
    stop.abort();
  });
  serve(deps, req, res, stop.signal).catch((err) => {
    if (res.destroyed) return;
    if (res.headersSent) return void res.destroy();
    const message = err instanceof Error ? err.message : String(err);
    const body = JSON.stringify(
      failure(500, "InternalError", `Internal error occurred: ${message}`),
    );
    res.writeHead(500, { "Content-Type": "application/json" }).end(body);
  });
}

async function serve(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const { ctx } = deps;
  const url = new URL(req.url ?? "/", "http://fake-api-server");
  const method = req.method ?? "GET";
  const route = resolveRoute(method, url.pathname, url.searchParams, ctx.registry);
  const record = recordOf(route, method, url, req);
  deps.record(record);
  const reply = new Reply(
    res,
    record,
    wantsPretty(url.searchParams, req.headers["user-agent"]),
    deps.keepAlive,
  );
  const body = ["POST", "PUT", "PATCH", "DELETE"].includes(method) ? await readBody(req) : "";
  if (signal.aborted) return;

  const tokens = deps.tokens();
  if (tokens && !tokens.has(bearerToken(record.authorization))) return reply.status(unauthorized());

  const fault = deps.faults.take(
    route.verb,
    record.resource,
    record.namespace,
    url.searchParams.get("resourceVersion") ?? "",
  );
  if (fault && answeredByFault(reply, route, fault)) return;

  if (method === "GET" && url.pathname === "/version") {
    // as the release the server imitates: 1.20 without streaming lists, else a current one
    const [major, minor, patch] = ctx.behaviour.streamingList ? [1, 37, 2] : [1, 20, 2];
    return reply.json(200, {
      major: String(major),
      minor: String(minor),
      gitVersion: `v${major}.${minor}.${patch}`,
      platform: "linux/amd64",
    });
  }
  if (route.kind === "not-found") {
    return reply.bytes(
      404,
      "text/plain; charset=utf-8",
      new TextEncoder().encode("404 page not found\n"),
    );
  }
  if (route.kind === "unknown-resource") return reply.status(resourceNotFound());
  if (route.kind === "discovery") {
    return serveDiscovery(ctx, reply, route, record.accept, req.headers.host ?? "");
  }
  const { resource, namespace, name } = route;
  if (route.verb !== "unknown" && !resource.verbs.includes(route.verb)) {
    return reply.status(methodNotAllowed());
  }
  let view;
  try {
    view = makeView(resource, namespace, url.searchParams, wantsMetadataOnly(record.accept));
  } catch (err) {
    if (err instanceof SelectorError) return reply.status(badRequest(err.message));
    throw err;
  }
  const query = url.searchParams;
  const dryRun = query.getAll("dryRun").includes("All");
  switch (route.verb) {
    case "list":
      return await serveList(ctx, reply, { resource, namespace, query, view, fault, signal });
    case "watch":
      return serveWatch(ctx, reply, { resource, namespace, query, view, fault });
    case "get":
      return serveGet(ctx, reply, { resource, namespace, name, view });
    case "patch":
      return servePatch(ctx, reply, { resource, namespace, name, view, dryRun }, {
        contentType: record.contentType ?? "",
        body,
        fieldManager: query.get("fieldManager"),
      });
    case "create":
    case "update":
    case "delete": {
      let parsed: unknown;
      try {
        parsed = route.verb === "delete" && body.trim() === "" ? {} : JSON.parse(body);
      } catch (err) {
        return reply.status(
          badRequest(`the request body is not valid JSON: ${(err as Error).message}`),
        );
      }
      const target = { resource, namespace, name, view, dryRun };
      if (route.verb === "delete") return serveDelete(ctx, reply, target, parsed);
      if (route.verb === "create") return serveCreate(ctx, reply, target, parsed);
      return serveUpdate(ctx, reply, target, parsed);
    }
    default:
      return reply.status(methodNotAllowed());
  }
}

/** Answers the request-time faults; true when the request is answered. */
function answeredByFault(reply: Reply, route: Route, fault: Fault): boolean {
  const streams = route.verb === "watch" || route.verb === "list";
  if (fault.kind === "status" || (fault.kind === "error-event" && route.verb !== "watch")) {
    const context = {
      verb: route.verb,
      resource: route.kind === "resource" ? route.resource.resource : undefined,
      group: route.kind === "resource" ? route.resource.group : undefined,
      namespace: route.kind === "resource" ? route.namespace : undefined,
    };
    const retry = fault.kind === "status" ? fault.retryAfterSeconds : undefined;
    const status = statusForCode(fault.code, context, retry, fault.message);
    reply.fault(fault.kind === "status" ? fault : { kind: "status", code: fault.code }, status);
    return true;
  }
  if (fault.kind === "reset" && (fault.afterEvents === undefined || !streams)) {
    reply.reset();
    return true;
  }
  return false;
}

function recordOf(route: Route, method: string, url: URL, req: IncomingMessage): RecordedRequest {
  const record: RecordedRequest = {
    seq: 0,
    method,
    path: url.pathname,
    query: url.searchParams,
    verb: route.verb,
    at: Date.now(),
  };
  if (route.kind === "resource") {
    record.resource = route.resource.resource;
    record.group = route.resource.group;
  } else if (route.kind === "unknown-resource") {
    record.resource = route.resourceName;
    record.group = route.group;
  } else if (route.kind === "discovery" && route.group !== undefined) {
    record.group = route.group;
  }
  if (route.kind === "resource" || route.kind === "unknown-resource") {
    if (route.namespace !== undefined) record.namespace = route.namespace;
    if (route.name !== undefined) record.name = route.name;
  }
  if (req.headers.authorization !== undefined) record.authorization = req.headers.authorization;
  if (req.headers.accept !== undefined) record.accept = req.headers.accept;
  const encoding = req.headers["accept-encoding"];
  if (encoding !== undefined) record.acceptEncoding = String(encoding);
  const contentType = req.headers["content-type"];
  if (contentType !== undefined) record.contentType = contentType;
  return record;
}

function bearerToken(authorization: string | undefined): string {
  const m = /^Bearer\s+(.+)$/i.exec(authorization ?? "");
  return m ? m[1].trim() : "";
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array);
  let length = 0;
  for (const c of chunks) length += c.length;
  const all = new Uint8Array(length);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.length;
  }
  return new TextDecoder().decode(all);
}
