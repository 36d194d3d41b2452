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
 */
export type ErrorReason = typeof ERROR_REASONS[number];

/**
 * Classifies an error for a metric label, from a fixed set (never a message,
 * URL or object name, so label values stay bounded): `expired` (410),
 * `status_4xx`, `status_5xx`, `network` (no HTTP answer), `decode` (a
 * malformed watch stream), `idle_timeout` (a half-open watch), `short_watch`,
 * `timeout` (a list past its deadline), `other`.
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
