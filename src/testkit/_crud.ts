/**
 * GET, POST (create), PUT (update) and DELETE of single objects.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObject, Status } from "../api/types.ts";
import type { ServerContext } from "./_context.ts";
import type { Reply } from "./_reply.ts";
import type { Resource } from "./_resources.ts";
import { badRequest, objectNotFound } from "./_status.ts";
import type { View } from "./_view.ts";

/** A request naming one object (or, for create, its collection). */
export interface ObjectRequest {
  resource: Resource;
  namespace?: string;
  name?: string;
  view: View;
}

/** GET one object. */
export function serveGet(ctx: ServerContext, reply: Reply, req: ObjectRequest): void {
  const object = ctx.store.get(req.resource, req.namespace, req.name ?? "");
  if (!object) {
    return reply.status(objectNotFound(req.resource.resource, req.name ?? "", req.resource.group));
  }
  reply.json(200, req.view.show(object));
}

/** POST a new object into the collection. */
export function serveCreate(
  ctx: ServerContext,
  reply: Reply,
  req: ObjectRequest,
  body: unknown,
): void {
  const { object, error } = checkBody(req, body);
  if (error) return reply.status(error);
  answer(reply, 201, () => ctx.store.create(req.resource, object));
}

/** PUT a new version of an existing object. */
export function serveUpdate(
  ctx: ServerContext,
  reply: Reply,
  req: ObjectRequest,
  body: unknown,
): void {
  const { object, error } = checkBody(req, body);
  if (error) return reply.status(error);
  if (object.metadata.name !== req.name) {
    return reply.status(badRequest(
      `the name of the object (${object.metadata.name}) does not match the name on the URL (${req.name})`,
    ));
  }
  answer(reply, 200, () => ctx.store.update(req.resource, object));
}

/** DELETE an object; answers a Success Status as 1.20 does for most resources. */
export function serveDelete(ctx: ServerContext, reply: Reply, req: ObjectRequest): void {
  const { resource } = req;
  answer(reply, 200, () => {
    const gone = ctx.store.delete(resource, req.namespace, req.name ?? "");
    const details: NonNullable<Status["details"]> = { name: gone.metadata.name };
    if (resource.group) details.group = resource.group;
    details.kind = resource.resource;
    details.uid = gone.metadata.uid;
    return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details };
  });
}

/** Answers `code` with what `write` returns, or the Status it throws. */
function answer(reply: Reply, code: number, write: () => unknown): void {
  let result: unknown;
  try {
    result = write();
  } catch (err) {
    if (err instanceof KubeStatusError && err.status) return reply.status(err.status);
    throw err;
  }
  reply.json(code, result);
}

/** The request body as an object of this resource in this namespace, or the 400 to answer. */
function checkBody(
  req: ObjectRequest,
  body: unknown,
): { object: KubeObject; error?: undefined } | { object?: undefined; error: Status } {
  const fail = (message: string) => ({ error: badRequest(message) });
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return fail("the request body must be a JSON object");
  }
  const object = body as KubeObject;
  const { resource } = req;
  if (object.kind !== undefined && object.kind !== resource.kind) {
    return fail(`the kind of the object (${object.kind}) does not match ${resource.kind}`);
  }
  if (object.apiVersion !== undefined && object.apiVersion !== resource.apiVersion) {
    return fail(
      `the API version of the object (${object.apiVersion}) does not match ${resource.apiVersion}`,
    );
  }
  const metadata = { ...(object.metadata ?? {}) };
  if (resource.namespaced) {
    if (metadata.namespace && metadata.namespace !== req.namespace) {
      return fail(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
    metadata.namespace = req.namespace;
  }
  return { object: { ...object, metadata } };
}
