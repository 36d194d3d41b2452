import { KubeStatusError } from "./kube_status_error.ts";

/**
 * True when the error says the requested resourceVersion (or continue token)
 * is gone: HTTP 410, Status reason `Expired` or `Gone`. The reflector then
 * relists.
 *
 * @example
 * ```ts
 * import { isExpired, KubeStatusError } from "../../mod.ts";
 * isExpired(new KubeStatusError({ code: 410, status: { reason: "Expired" } })); // true
 * ```
 */
export function isExpired(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return false;
  // `reason` is always a string (a Status reason that is not one reads as "").
  return err.code === 410 || err.reason === "Expired" || err.reason === "Gone";
}

/**
 * True when the API server rejected a resourceVersion newer than it has seen
 * (504 with Status cause `ResourceVersionTooLarge`; also matches the message
 * text "Too large resource version" that older servers send).
 *
 * @example
 * ```ts
 * import { isTooLargeResourceVersion, KubeStatusError } from "../../mod.ts";
 * const err = new KubeStatusError({
 *   code: 504,
 *   status: { reason: "Timeout", details: { causes: [{ reason: "ResourceVersionTooLarge" }] } },
 * });
 * isTooLargeResourceVersion(err); // true
 * ```
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return false;
  if (err.causes.includes("ResourceVersionTooLarge")) return true;
  const message: unknown = err.status?.message;
  return typeof message === "string" && /too large resource version/i.test(message);
}

/**
 * True for failures worth retrying after a pause: 429, 5xx, request
 * timeouts (408), and every non-HTTP failure (connection refused or reset,
 * a malformed stream). False for 4xx answers that will not change by waiting
 * (400, 401, 403, 404, 422...). A reflector retries everything with backoff
 * anyway; this tells the severity to `onError` users.
 *
 * @example
 * ```ts
 * import { isRetriable, KubeStatusError } from "../../mod.ts";
 * isRetriable(new KubeStatusError({ code: 503 })); // true
 * isRetriable(new KubeStatusError({ code: 403 })); // false
 * ```
 */
export function isRetriable(err: unknown): boolean {
  if (!(err instanceof KubeStatusError)) return true;
  return err.code === 429 || err.code === 408 || err.code >= 500 || isExpired(err);
}
