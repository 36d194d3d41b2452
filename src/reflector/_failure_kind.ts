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
import { ListDecodeError } from "../transport/list_stream.ts";
import type { FailureKind } from "./_watch_machine.ts";

/**
 * Thrown into the watcher (`iterator.throw(...)`) by a consumer that could
 * not apply the event it was given (the reflector, when its store fails):
 * the watcher treats it as `bad-data` (relist after the backoff) without
 * reporting it again, since the consumer has reported the cause.
 */
export class ConsumerFailure extends Error {
  constructor(cause: unknown) {
    super("the consumer could not apply an event", { cause });
    this.name = "ConsumerFailure";
  }
}

/** HTTP codes with which servers refuse a streaming list (1.20 answers 422 Invalid). */
const STREAMING_REFUSED = new Set([400, 403, 404, 405, 422, 501]);

/**
 * Classifies an error for the recovery rules (see `FailureKind`).
 * `streaming`: the request was a streaming list, so a 4xx refusal means
 * the server does not support it.
 */
export function failureKind(err: unknown, streaming = false): FailureKind {
  if (isExpired(err) || isTooLargeResourceVersion(err)) return "expired";
  if (err instanceof KubeStatusError) {
    if (err.code < 400) return "bad-data"; // a 2xx answer whose body was unusable
    if (streaming && STREAMING_REFUSED.has(err.code)) return "unsupported";
    return "answered";
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
