/**
 * Bounded error classes for metric labels.
 *
 * @module
 */
import {
  KubeNetworkError,
  ListTimeoutError,
  ShortWatchError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { isExpired } from "../api/predicates.ts";

/**
 * Every value {@linkcode errorReason} can return: a metric label's whole range.
 *
 * @example
 * ```ts
 * import { ERROR_REASONS } from "./error_reason.ts";
 * // start every reason's series at zero, so rates work from the first error
 * const errors = Object.fromEntries(ERROR_REASONS.map((reason) => [reason, 0]));
 * console.log(errors.expired, errors.other); // 0 0
 * ```
 */
export const ERROR_REASONS = [
  "expired",
  "status_4xx",
  "status_5xx",
  "network",
  "decode",
  "idle_timeout",
  "short_watch",
  "timeout",
  "other",
] as const;

/**
 * A bounded error class, safe as a metric label.
 *
 * @example
 * ```ts
 * import { type ErrorReason, errorReason } from "./error_reason.ts";
 * const reason: ErrorReason = errorReason(new Error("boom"));
 * console.log(reason); // other
 * ```
 */
export type ErrorReason = typeof ERROR_REASONS[number];

/**
 * Classifies an error for a metric label, from a fixed set (never a message,
 * URL or object name, so label values stay bounded): `expired` (410),
 * `status_4xx`, `status_5xx`, `network` (no HTTP answer), `decode` (a
 * malformed watch stream), `idle_timeout` (a half-open watch), `short_watch`,
 * `timeout` (a list past its deadline), `other`.
 *
 * @example
 * ```ts
 * import { errorReason, KubeStatusError } from "../../mod.ts";
 * console.log(errorReason(new KubeStatusError({ code: 410 }))); // expired
 * console.log(errorReason(new KubeStatusError({ code: 503 }))); // status_5xx
 * console.log(errorReason(new Error("?"))); // other
 * ```
 */
export function errorReason(error: unknown): ErrorReason {
  if (isExpired(error)) return "expired";
  if (error instanceof KubeStatusError) {
    if (error.code >= 500) return "status_5xx";
    if (error.code >= 400) return "status_4xx";
    return "other";
  }
  if (error instanceof KubeNetworkError) return "network";
  if (error instanceof WatchDecodeError) return "decode";
  if (error instanceof WatchIdleTimeoutError) return "idle_timeout";
  if (error instanceof ShortWatchError) return "short_watch";
  if (error instanceof ListTimeoutError) return "timeout";
  return "other";
}
