/**
 * GET, POST (create), PUT (update), PATCH and DELETE of single objects,
 * with `dryRun=All` and delete preconditions. PATCH takes a JSON merge
 * patch, a JSON patch, a strategic merge patch (served as a merge patch:
 * lists are replaced, never merged by key; custom resources refuse it with
 * 415, as the real server does) or a server-side apply (JSON only; served as
 * create-or-merge: no field ownership, so no apply conflicts and `force` is
 * accepted but changes nothing).
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";
import type { KubeObject, Status } from "../api/types.ts";
import type { ServerContext } from "./_context.ts";
import type { Reply } from "./_reply.ts";
import { jsonPatch, mergePatch, PatchError } from "./_patch.ts";
import { DEFAULT_RESOURCES, type Resource } from "./_resources.ts";
import {
  badRequest,
  fieldManagerRequired,
  objectNotFound,
  PATCH_CONTENT_TYPES,
  patchFailed,
  unsupportedPatchType,
} from "./_status.ts";
import type { View } from "./_view.ts";

/** A request naming one object (or, for create, its collection). */
export interface ObjectRequest {
  resource: Resource;
  namespace?: string;
  name?: string;
  view: View;
  /** `dryRun=All`: answer, store nothing. */
  dryRun?: boolean;
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
  answer(reply, 201, () => ctx.store.create(req.resource, object, { dryRun: req.dryRun }));
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
  answer(reply, 200, () => ctx.store.update(req.resource, object, { dryRun: req.dryRun }));
}

/** PATCH an object (see the module doc for the patch types). */
export function servePatch(
  ctx: ServerContext,
  reply: Reply,
  req: ObjectRequest,
  patch: { contentType: string; body: string; fieldManager: string | null },
): void {
  const { resource } = req;
  const name = req.name ?? "";
  const type = patch.contentType.split(";")[0].trim().toLowerCase();
  const builtIn = DEFAULT_RESOURCES.some((d) =>
    d.group === resource.group && d.version === resource.version && d.resource === resource.resource
  );
  const accepted = PATCH_CONTENT_TYPES.filter((t) => builtIn || !t.includes("strategic"));
  if (!(accepted as readonly string[]).includes(type)) {
    return reply.status(unsupportedPatchType(accepted));
  }
  const apply = type === "application/apply-patch+yaml";
  if (apply && !patch.fieldManager) return reply.status(fieldManagerRequired());
  let parsed: unknown;
  try {
    parsed = JSON.parse(patch.body);
  } catch (err) {
    const what = apply ? "the fake API server reads apply bodies as JSON only" : "not valid JSON";
    return reply.status(badRequest(`the patch is ${what}: ${(err as Error).message}`));
  }
  if (apply && typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
    const metadata = (parsed as KubeObject).metadata ?? {};
    if (metadata.name !== undefined && metadata.name !== name) {
      return reply.status(badRequest(
        `the name of the object (${metadata.name}) does not match the name on the URL (${name})`,
      ));
    }
    parsed = { ...parsed, metadata: { ...metadata, name } };
  }
  const existing = ctx.store.get(resource, req.namespace, name);
  if (apply && !existing) return serveCreate(ctx, reply, req, parsed);
  if (!existing) return reply.status(objectNotFound(resource.resource, name, resource.group));
  let patched: unknown;
  try {
    if (type === "application/json-patch+json") patched = jsonPatch(existing, parsed);
    else if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return reply.status(badRequest("a merge patch must be a JSON object"));
    } else patched = mergePatch(existing, parsed);
  } catch (err) {
    if (!(err instanceof PatchError)) throw err;
    return reply.status(err.code === 400 ? badRequest(err.message) : patchFailed(err.message));
  }
  const { object, error } = checkBody(req, patched);
  if (error) return reply.status(error);
  if (object.metadata.name !== name) {
    return reply.status(badRequest("metadata.name: the name of a patched object cannot change"));
  }
  answer(reply, 200, () => ctx.store.update(resource, object, { dryRun: req.dryRun }));
}

/**
 * DELETE an object (with the DeleteOptions body's `preconditions`; no
 * garbage collector, so `propagationPolicy` changes nothing); answers a
 * Success Status as 1.20 does for most resources, or, when finalizers keep
 * the object (only marked with a `deletionTimestamp`), 200 with the object.
 */
export function serveDelete(
  ctx: ServerContext,
  reply: Reply,
  req: ObjectRequest,
  body: unknown = {},
): void {
  const { resource } = req;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return reply.status(badRequest("the DeleteOptions body must be a JSON object"));
  }
  const { preconditions } = body as { preconditions?: { uid?: string; resourceVersion?: string } };
  answer(reply, 200, () => {
    const { object: gone, deleted } = ctx.store.delete(resource, req.namespace, req.name ?? "", {
      dryRun: req.dryRun,
      preconditions: preconditions ?? undefined,
    });
    if (!deleted) return req.view.show(gone);
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
