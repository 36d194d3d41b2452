import {
  KubeNetworkError,
  ListTimeoutError,
  UnexpectedKindError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { isExpired, isTooLargeResourceVersion } from "../api/predicates.ts";
import { ListDecodeError } from "../transport/list_stream.ts";
import type { FailureKind } from "./_watch_machine.ts";

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
  if (
    err instanceof WatchDecodeError || err instanceof ListDecodeError ||
    err instanceof MalformedResponseError || err instanceof UnexpectedKindError
  ) {
    return "bad-data";
  }
  return "bug";
}
