import {
  KubeNetworkError,
  ListTimeoutError,
  UnexpectedKindError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { PermissionDeniedError } from "../api/permission_denied_error.ts";
import { isExpired, isTooLargeResourceVersion } from "../api/predicates.ts";
import { ListDecodeError } from "../api/list_decode_error.ts";
import type { FailureKind } from "./_watch_machine.ts";

/**
 * Thrown into the watcher (`iterator.throw(...)`) by a consumer that could
 * not apply the events it was given (the reflector, when its store fails):
 * the watcher treats it as `bad-data` (relist after the backoff) without
 * reporting it again, since the consumer has reported the cause.
 * `appliedResourceVersion` is the version of the last event the consumer
 * did apply (the events of one read are applied one by one, and a store may
 * fail in the middle): the relist asks for nothing older than that.
 */
export class ConsumerFailure extends Error {
  /** The version of the last event applied before the failure, when any was. */
  readonly appliedResourceVersion: string | undefined;
  constructor(cause: unknown, appliedResourceVersion?: string) {
    super("the consumer could not apply an event", { cause });
    this.name = "ConsumerFailure";
    this.appliedResourceVersion = appliedResourceVersion || undefined;
  }
}

/** The `request` of the error an ERROR event stands for (see {@linkcode errorEventError}). */
const ERROR_EVENT = "watch ERROR event";

/** The error a watch ERROR event stands for (a malformed Status never throws here). */
export function errorEventError(status: unknown): KubeStatusError {
  return KubeStatusError.fromStatus(status, { request: ERROR_EVENT });
}

/** Whether `err` stands for a watch ERROR event (not an HTTP answer). */
export function isErrorEvent(err: unknown): boolean {
  return err instanceof KubeStatusError && err.request === ERROR_EVENT;
}

/** The request options only a streaming list sends. */
const STREAMING_FIELDS = /\b(sendInitialEvents|resourceVersionMatch)\b/;

/**
 * Whether `err` says "this server has no streaming lists": a 422 Invalid
 * about `sendInitialEvents` or `resourceVersionMatch` (1.20–1.26 refuse
 * `resourceVersionMatch` on a watch; 1.27–1.31 with the WatchList gate off
 * refuse `sendInitialEvents`), or one that names no field at all. A 422
 * naming only other fields (a field selector) is about the request; a 401,
 * 403 or 404 says nothing about the feature: it is about the credentials,
 * the resource or the namespace.
 */
export function isStreamingRefusal(err: unknown): boolean {
  if (!(err instanceof KubeStatusError) || err.code !== 422) return false;
  const fields = causeFields(err);
  return fields.length === 0 || fields.some((f) => STREAMING_FIELDS.test(f)) ||
    STREAMING_FIELDS.test(String(err.status?.message ?? ""));
}

/** The `field` of each Status cause (strings only). */
function causeFields(err: KubeStatusError): string[] {
  const details: unknown = err.status?.details;
  const causes: unknown = details !== null && typeof details === "object"
    ? (details as { causes?: unknown }).causes
    : undefined;
  if (!Array.isArray(causes)) return [];
  return causes.flatMap((c) =>
    c !== null && typeof c === "object" && typeof c.field === "string" ? [c.field] : []
  );
}

/**
 * Classifies an error for the recovery rules (see `FailureKind`).
 *
 * - 410 Expired/Gone and 504 ResourceVersionTooLarge: `expired`.
 * - An ERROR event that is not one of those: `bad-data` (the stream cannot
 *   be trusted past it: relist, as client-go does).
 * - On a streaming list (`streaming`), a refusal of the feature itself
 *   ({@linkcode isStreamingRefusal}): `unsupported`.
 * - 429 and 5xx: `answered` (retried as they were, after the backoff and
 *   `Retry-After`); any other 4xx: `refused` (waiting will not change the
 *   answer: a watch relists, client-go's `isWatchErrorRetriable`).
 * - No answer (connection refused or reset, DNS, TLS, the idle deadline):
 *   `no-answer`; a list too slow: `answered`.
 * - An answer that could not be used, or a consumer that could not apply
 *   it: `bad-data`. Anything else: `bug`.
 */
export function failureKind(err: unknown, streaming = false): FailureKind {
  if (isExpired(err) || isTooLargeResourceVersion(err)) return "expired";
  if (err instanceof KubeStatusError) {
    if (isErrorEvent(err)) return "bad-data";
    if (err.code < 400) return "bad-data"; // a 2xx answer whose body was unusable
    if (streaming && isStreamingRefusal(err)) return "unsupported";
    if (err.code === 429 || err.code >= 500) return "answered";
    return "refused";
  }
  if (err instanceof KubeNetworkError || err instanceof WatchIdleTimeoutError) return "no-answer";
  if (err instanceof ListTimeoutError) return "answered";
  // a configuration error: retried at the backoff's pace, not the reconnect's
  if (err instanceof PermissionDeniedError) return "answered";
  if (err instanceof ConsumerFailure) return "bad-data";
  if (
    err instanceof WatchDecodeError || err instanceof ListDecodeError ||
    err instanceof MalformedResponseError || err instanceof UnexpectedKindError
  ) {
    return "bad-data";
  }
  return "bug";
}

/** A validated `Retry-After` of an error, in ms (not capped). */
export function retryAfterOf(err: unknown): number | undefined {
  if (!(err instanceof KubeStatusError)) return undefined;
  const ms = err.retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}
