import type { Status } from "./types.ts";

/**
 * Options of {@linkcode KubeStatusError}.
 *
 * @example
 * ```ts
 * import { KubeStatusError, type KubeStatusErrorOptions } from "./kube_status_error.ts";
 * const options: KubeStatusErrorOptions = {
 *   code: 429,
 *   request: "GET /api/v1/pods",
 *   retryAfterMs: 2_000,
 *   bodyDescription: "text/plain, 18 bytes",
 * };
 * const err = new KubeStatusError(options);
 * console.log(err.message); // GET /api/v1/pods: 429: text/plain, 18 bytes
 * console.log(err.retryAfterMs); // 2000
 * ```
 */
export interface KubeStatusErrorOptions {
  /** The HTTP status code, or the `code` of a watch ERROR event's Status. */
  code: number;
  /** The request that failed, as `"GET /api/v1/configmaps"` (no query, no credentials). Default: `""`. */
  request?: string;
  /** The decoded `Status` body, when the server sent one. Default: `undefined`. */
  status?: Status;
  /** `Retry-After` in milliseconds (from the header or `details.retryAfterSeconds`). Default: `undefined`. */
  retryAfterMs?: number;
  /** A description of a body that was not a Status (for example `"text/html, 1234 bytes"`). Default: `undefined`. */
  bodyDescription?: string;
}

/**
 * An error the API server answered with: an HTTP status of 400 and above,
 * or a watch ERROR event. `code`, `reason` and `retryAfterMs` drive recovery
 * (see {@linkcode isExpired}, {@linkcode isTooLargeResourceVersion},
 * {@linkcode isRetriable}). The message never holds credentials or a body
 * that is not a Kubernetes `Status`.
 *
 * @example
 * ```ts
 * import { KubeStatusError } from "./kube_status_error.ts";
 * const err = new KubeStatusError({ code: 410, status: { reason: "Expired", message: "too old" } });
 * console.log(err.code, err.reason); // 410 Expired
 * ```
 */
export class KubeStatusError extends Error {
  /** HTTP status code, or the Status `code` of an ERROR event. */
  readonly code: number;
  /** The Status `reason` (`"Expired"`, `"Gone"`, `"TooManyRequests"`...), or `""` when absent. */
  readonly reason: string;
  /** The decoded Status body, when there was one. */
  readonly status: Status | undefined;
  /** How long the server asked us to wait, in milliseconds, when it said. */
  readonly retryAfterMs: number | undefined;
  /** The request that failed, without query or credentials. */
  readonly request: string;

  constructor(options: KubeStatusErrorOptions) {
    const { code, request = "", status, retryAfterMs, bodyDescription } = options;
    const reason = status?.reason ?? "";
    const detail = status?.message ?? bodyDescription ?? "";
    const head = request ? `${request}: ` : "";
    super(`${head}${code}${reason ? ` ${reason}` : ""}${detail ? `: ${detail}` : ""}`);
    this.name = "KubeStatusError";
    this.code = code;
    this.reason = reason;
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.request = request;
  }

  /** The Status `details.causes[].reason` values. */
  get causes(): string[] {
    return (this.status?.details?.causes ?? []).map((c) => c.reason ?? "").filter(Boolean);
  }
}
