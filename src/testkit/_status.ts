/**
 * The `Status` bodies kube-apiserver 1.20 answers with, field for field and
 * in its field order (kind, apiVersion, metadata, status, message, reason,
 * details, code), as recorded in tests/fixtures/kube-apiserver-1.20/.
 *
 * @module
 */
import type { ListMeta, Status } from "../api/types.ts";

type Details = NonNullable<Status["details"]>;

/** Builds a failure Status with the real server's field order. */
export function failure(
  code: number,
  reason: string,
  message: string,
  extra: { metadata?: ListMeta; details?: Details } = {},
): Status {
  const status: Status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: extra.metadata ?? {},
    status: "Failure",
    message,
    reason,
  };
  if (extra.details) status.details = extra.details;
  status.code = code;
  return status;
}

/** 404 for a path that names no known resource (unknown-resource.http). */
export function resourceNotFound(): Status {
  return failure(404, "NotFound", "the server could not find the requested resource", {
    details: {},
  });
}

/** 404 for a missing object. */
export function objectNotFound(resource: string, name: string, group = ""): Status {
  const details: Details = { name };
  if (group) details.group = group;
  details.kind = resource;
  return failure(404, "NotFound", `${qualified(resource, group)} "${name}" not found`, { details });
}

/** 409 AlreadyExists (create-conflict.http). */
export function alreadyExists(resource: string, name: string, group = ""): Status {
  const details: Details = { name };
  if (group) details.group = group;
  details.kind = resource;
  const message = `${qualified(resource, group)} "${name}" already exists`;
  return failure(409, "AlreadyExists", message, { details });
}

/** 409 Conflict: an update carried a stale resourceVersion (or `why`: a failed precondition). */
export function conflict(
  resource: string,
  name: string,
  group = "",
  why =
    "the object has been modified; please apply your changes to the latest version and try again",
): Status {
  const details: Details = { name };
  if (group) details.group = group;
  details.kind = resource;
  const message = `Operation cannot be fulfilled on ${
    qualified(resource, group)
  } "${name}": ${why}`;
  return failure(409, "Conflict", message, { details });
}

/** The patch content types a resource accepts (custom resources: no strategic merge patch). */
export const PATCH_CONTENT_TYPES = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/apply-patch+yaml",
  "application/strategic-merge-patch+json",
] as const;

/** 415 for a PATCH whose Content-Type is no patch type. */
export function unsupportedPatchType(accepted: readonly string[]): Status {
  return failure(
    415,
    "UnsupportedMediaType",
    "the body of the request was in an unknown format - accepted media types include: " +
      accepted.join(", "),
  );
}

/** 422 for an apply without `fieldManager`. */
export function fieldManagerRequired(): Status {
  const message = "is required for apply patch";
  return failure(
    422,
    "Invalid",
    `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: ${message}`,
    {
      details: {
        group: "meta.k8s.io",
        kind: "PatchOptions",
        causes: [{
          reason: "FieldValueRequired",
          message: `Required value: ${message}`,
          field: "fieldManager",
        }],
      },
    },
  );
}

/** 422 for a patch that does not apply (a failed JSON patch `test`, a missing path). */
export function patchFailed(message: string): Status {
  return failure(422, "Invalid", message);
}

/** One field error of an Invalid Status (`reason` as `FieldValueForbidden`, `message` as `Forbidden: ...`). */
export interface FieldCause {
  reason: string;
  field: string;
  message: string;
}

/**
 * 422 Invalid for an object a write would leave invalid (the registry's
 * `NewInvalid`): `ConfigMap "a" is invalid: metadata.finalizers: Forbidden: ...`.
 */
export function invalidObject(
  kind: string,
  group: string,
  name: string,
  causes: FieldCause[],
): Status {
  const summary = causes.map((c) => `${c.field}: ${c.message}`).join(", ");
  const message = `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${
    causes.length > 1 ? `[${summary}]` : summary
  }`;
  const details: Details = { name };
  if (group) details.group = group;
  details.kind = kind;
  details.causes = causes.map((c) => ({ reason: c.reason, message: c.message, field: c.field }));
  return failure(422, "Invalid", message, { details });
}

/** 401 (unauthorized.http). */
export function unauthorized(): Status {
  return failure(401, "Unauthorized", "Unauthorized");
}

/** 400 BadRequest. */
export function badRequest(message: string): Status {
  return failure(400, "BadRequest", message);
}

/** 405 for a method the resource does not serve. */
export function methodNotAllowed(): Status {
  return failure(
    405,
    "MethodNotAllowed",
    "the server does not allow this method on the requested resource",
    { details: {} },
  );
}

/** 410 Expired for a list at a compacted resourceVersion. */
export function listTooOld(): Status {
  return failure(410, "Expired", "The resourceVersion for the provided list is too old.");
}

/** 410 Expired as a watch ERROR event carries it (watch-too-old-no-watch-cache.http). */
export function watchTooOld(): Status {
  return failure(410, "Expired", "The resourceVersion for the provided watch is too old.");
}

/** 410 Expired as the watch cache answers it with an HTTP status. */
export function watchTooOldStatus(requested: number, oldest: number): Status {
  return failure(410, "Expired", `too old resource version: ${requested} (${oldest})`);
}

/** 410 for an expired continue token, with a fresh inconsistent token (list-continue-expired.http). */
export function continueExpired(inconsistentToken: string): Status {
  const message = "The provided continue parameter is too old to display a consistent list " +
    "result. You can start a new list without the continue parameter, or use the continue " +
    "token in this response to retrieve the remainder of the results. Continuing with the " +
    "provided token results in an inconsistent list - objects that were created, modified, or " +
    "deleted between the time the first chunk was returned and now may show up in the list.";
  return failure(410, "Expired", message, { metadata: { continue: inconsistentToken } });
}

/** 504 with cause ResourceVersionTooLarge (list-rv-too-large.http). */
export function tooLargeResourceVersion(requested: string, current: number): Status {
  return failure(
    504,
    "Timeout",
    `Timeout: Too large resource version: ${requested}, current: ${current}`,
    {
      details: {
        causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
        retryAfterSeconds: 1,
      },
    },
  );
}

/** 422 Invalid for `resourceVersionMatch` on a watch (watchlist-unsupported-1.20.http). */
export function watchResourceVersionMatchForbidden(resourceVersionGiven: boolean): Status {
  const messages = ["Forbidden: resourceVersionMatch is forbidden for watch"];
  if (!resourceVersionGiven) {
    messages.push(
      "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    );
  }
  return invalidListOptions(
    messages.map((message) => ({ field: "resourceVersionMatch", message })),
  );
}

/** 422 Invalid on ListOptions, one cause per `{field, message}` (message starts with its type). */
export function invalidListOptions(errors: { field: string; message: string }[]): Status {
  const summary = errors.map((e) => `${e.field}: ${e.message}`).join(", ");
  const causes = errors.map((e) => ({
    reason: e.message.startsWith("Forbidden") ? "FieldValueForbidden" : "FieldValueInvalid",
    message: e.message,
    field: e.field,
  }));
  const message = `ListOptions.meta.k8s.io "" is invalid: ${
    errors.length > 1 ? `[${summary}]` : summary
  }`;
  return failure(422, "Invalid", message, {
    details: { group: "meta.k8s.io", kind: "ListOptions", causes },
  });
}

/** What a fault with only a status code answers: the reason and message the real server uses. */
export function statusForCode(
  code: number,
  context: { verb: string; resource?: string; group?: string; namespace?: string },
  retryAfterSeconds?: number,
  message?: string,
): Status {
  const retry = retryAfterSeconds === undefined ? {} : { retryAfterSeconds };
  const { verb, resource = "", group = "", namespace } = context;
  switch (code) {
    case 400:
      return badRequest(message ?? "bad request");
    case 401:
      return failure(401, "Unauthorized", message ?? "Unauthorized");
    case 403: {
      const scope = namespace ? `in the namespace "${namespace}"` : "at the cluster scope";
      const text = message ??
        `${qualified(resource, group)} is forbidden: User "system:anonymous" cannot ${verb} ` +
          `resource "${resource}" in API group "${group}" ${scope}`;
      return failure(403, "Forbidden", text, { details: { kind: resource } });
    }
    case 404:
      return message ? failure(404, "NotFound", message, { details: {} }) : resourceNotFound();
    case 409:
      return failure(
        409,
        "Conflict",
        message ??
          "the object has been modified; please apply your changes to the latest version and try again",
        { details: { kind: resource } },
      );
    case 410:
      if (message) return failure(410, "Expired", message);
      return verb === "watch" ? watchTooOld() : listTooOld();
    case 429:
      return failure(
        429,
        "TooManyRequests",
        message ?? "Too many requests, please try again later.",
        {
          details: { retryAfterSeconds: retryAfterSeconds ?? 1 },
        },
      );
    case 500: {
      const cause = message ?? "injected fault";
      return failure(500, "InternalError", `Internal error occurred: ${cause}`, {
        details: { causes: [{ message: cause }], ...retry },
      });
    }
    case 503:
      return failure(
        503,
        "ServiceUnavailable",
        message ?? "the server is currently unable to handle the request",
        retryAfterSeconds === undefined ? {} : { details: retry },
      );
    case 504:
      return failure(
        504,
        "Timeout",
        message ?? "Timeout: request did not complete within the allotted timeout",
        { details: retry },
      );
    default:
      return failure(
        code,
        code >= 500 ? "InternalError" : "BadRequest",
        message ?? `injected ${code}`,
        retryAfterSeconds === undefined ? {} : { details: retry },
      );
  }
}

function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}
