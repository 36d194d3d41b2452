import type { KubeStatusError } from "./kube_status_error.ts";

/**
 * A list or watch the API server refused for a reason that waiting will not
 * change: a 4xx answer other than `410` and `429` (a role that may `list`
 * but not `watch`, a resource or API version the server does not have, a
 * request it finds invalid). The message names the verb and the resource,
 * as the server's RBAC message would. The reflector does not retry a
 * refused watch as a watch (client-go's rule): it relists after the backoff,
 * so the store stays within one backoff of the server while only `list` is
 * allowed. The server's answer is `cause` (a {@linkcode KubeStatusError}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeStatusError, RequestRefusedError } from "../../mod.ts";
 *
 * const answer = new KubeStatusError({
 *   code: 403,
 *   request: "GET /api/v1/namespaces/team-b/configmaps",
 *   status: { kind: "Status", apiVersion: "v1", code: 403, reason: "Forbidden" },
 * });
 * const err = new RequestRefusedError("watch", answer);
 * assert.equal(err.message.startsWith("forbidden: cannot watch configmaps in namespace team-b"), true);
 * assert.equal(err.code, 403);
 * ```
 */
export class RequestRefusedError extends Error {
  /** What was refused: `"list"` (a list or a streaming list) or `"watch"`. */
  readonly verb: "list" | "watch";
  /** The HTTP status code of the refusal. */
  readonly code: number;
  /** The resource asked for (`"configmaps"`, `"deployments.apps"`), or `""` when the request path does not say. */
  readonly resource: string;
  /** The namespace asked for, or `""` for all namespaces or a cluster-scoped resource. */
  readonly namespace: string;

  /**
   * Creates the error from the server's answer.
   *
   * @param verb What was refused.
   * @param cause The server's answer (its `request` names the path).
   */
  constructor(verb: "list" | "watch", cause: KubeStatusError) {
    const { resource, version, namespace } = parseCollectionPath(cause.request);
    const what = resource || "the resource";
    const where = namespace ? ` in namespace ${namespace}` : "";
    const answer = `${cause.code}${cause.reason ? ` ${cause.reason}` : ""}`;
    const detail = statusMessage(cause);
    const head = cause.code === 403
      ? `forbidden: cannot ${verb} ${what}${where}`
      : cause.code === 404
      ? `${what} not found in ${version || "the API"}: cannot ${verb} it${where}`
      : cause.code === 401
      ? `unauthorized: cannot ${verb} ${what}${where} (the credentials were refused)`
      : `the server refused to ${verb} ${what}${where}`;
    super(`${head} (${answer}${detail ? `: ${detail}` : ""})`, { cause });
    this.name = "RequestRefusedError";
    this.verb = verb;
    this.code = cause.code;
    this.resource = resource;
    this.namespace = namespace;
  }
}

/** The Status message, shortened (the whole Status stays in `cause.status`). */
function statusMessage(err: KubeStatusError): string {
  const m = err.status?.message;
  if (typeof m !== "string") return "";
  return m.length > 300 ? `${m.slice(0, 300)}…` : m;
}

/**
 * The resource, version and namespace of a collection request
 * (`"GET /api/v1/namespaces/ns/configmaps"`,
 * `"GET /apis/apps/v1/deployments"`); empty strings where it does not say.
 */
function parseCollectionPath(request: string): {
  resource: string;
  version: string;
  namespace: string;
} {
  const path = request.replace(/^[A-Z]+ /, "").split("?")[0];
  const parts = path.split("/").filter((p) => p !== "");
  let rest: string[];
  let group = "";
  let version = "";
  if (parts[0] === "api" && parts.length >= 2) {
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === "apis" && parts.length >= 3) {
    group = parts[1];
    version = `${parts[1]}/${parts[2]}`;
    rest = parts.slice(3);
  } else {
    return { resource: "", version: "", namespace: "" };
  }
  let namespace = "";
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = decode(rest[1]);
    rest = rest.slice(2);
  }
  const plural = rest[0] ? decode(rest[0]) : "";
  const resource = plural && group ? `${plural}.${group}` : plural;
  return { resource, version, namespace };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
