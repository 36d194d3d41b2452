/**
 * Answers the discovery requests of the fake API server (see `_discovery.ts`).
 *
 * @module
 */
import type { ServerContext } from "./_context.ts";
import {
  aggregatedContentType,
  aggregatedDocument,
  apiGroupDocument,
  apiGroupListDocument,
  apiResourceListDocument,
  apiVersionsDocument,
  negotiateDiscovery,
} from "./_discovery.ts";
import { encodeJson } from "./_json.ts";
import type { Reply } from "./_reply.ts";
import type { Route } from "./_router.ts";
import { failure } from "./_status.ts";

const NOT_FOUND = new TextEncoder().encode("404 page not found\n");

/** Serves `/api`, `/api/VERSION`, `/apis`, `/apis/GROUP`, `/apis/GROUP/VERSION`. */
export function serveDiscovery(
  ctx: ServerContext,
  reply: Reply,
  route: Extract<Route, { kind: "discovery" }>,
  accept: string | undefined,
  host: string,
): void {
  const resources = ctx.registry.all();
  const { root, group, version } = route;
  if (group === undefined) {
    const form = negotiateDiscovery(accept, ctx.behaviour.discovery === "aggregated");
    if (form === undefined) {
      return reply.status(failure(
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, " +
          "application/vnd.kubernetes.protobuf",
      ));
    }
    if (form !== "legacy") {
      const body = encodeJson(aggregatedDocument(resources, root, form), reply.pretty);
      return reply.bytes(200, aggregatedContentType(form), new TextEncoder().encode(body), {
        Vary: "Accept",
      });
    }
    return reply.json(
      200,
      root === "api" ? apiVersionsDocument(resources, host) : apiGroupListDocument(resources),
    );
  }
  const doc = version === undefined
    ? apiGroupDocument(resources, group)
    : apiResourceListDocument(resources, group, version);
  if (doc === undefined) return reply.bytes(404, "text/plain; charset=utf-8", NOT_FOUND);
  reply.json(200, doc);
}
