import { retryAfterMsFromStatus } from "./retry_after.ts";
import type { Status } from "./types.ts";

/**
 * Options of {@linkcode KubeStatusError}.
 */
export interface KubeStatusErrorOptions {
  /** The HTTP status code, or the `code` of a watch ERROR event's Status (anything but a number reads as `500`). */
  code: number;
  /** The request that failed, as `"GET /api/v1/configmaps"` (no query, no credentials). Default: `""`. */
  request?: string;
  /** The decoded `Status` body, when the server sent one. Default: `undefined`. */
  status?: Status;
  /**
   * `Retry-After` in milliseconds (from the header). A value that is not a
   * finite, non-negative number is ignored. Default (or when ignored): the
   * Status's `details.retryAfterSeconds` when valid (see
   * `retryAfterMsFromStatus`), else `undefined`.
   */
  retryAfterMs?: number;
  /** A description of a body that was not a Status (for example `"text/html, 1234 bytes"`). Default: `undefined`. */
  bodyDescription?: string;
}

/** The longest Status message quoted in an error's `message` (the whole Status stays in `status`). */
const MAX_DETAIL = 1024;

function validMs(ms: unknown): number | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/**
 * An error the API server answered with: an HTTP status of 400 and above,
 * or a watch ERROR event. `code`, `reason` and `retryAfterMs` drive recovery
 * (see {@linkcode isExpired}, {@linkcode isTooLargeResourceVersion},
 * {@linkcode isRetriable}). The message never holds credentials or a body
 * that is not a Kubernetes `Status`. A malformed Status (a `reason` or
 * `message` that is not a string, `details` that is `null`, `causes` that is
 * not an array of objects...) never makes it throw: such fields read as
 * absent.
 *
 * @example What a failed request rejects with
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, KubeStatusError } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const err = await client.request("/api/v1/namespaces/fx/configmaps/missing").catch((e) => e);
 * assert.ok(err instanceof KubeStatusError);
 * assert.equal(err.code, 404);
 * assert.equal(err.reason, "NotFound");
 * assert.equal(err.request, "GET /api/v1/namespaces/fx/configmaps/missing");
 * await server.close();
 * ```
 */
export class KubeStatusError extends Error {
  /** HTTP status code, or the Status `code` of an ERROR event. */
  readonly code: number;
  /** The Status `reason` (`"Expired"`, `"Gone"`, `"TooManyRequests"`...), or `""` when absent or not a string. */
  readonly reason: string;
  /** The decoded Status body, when there was one, as received. */
  readonly status: Status | undefined;
  /** How long the server asked us to wait, in milliseconds, when it said (validated, not capped). */
  readonly retryAfterMs: number | undefined;
  /** The request that failed, without query or credentials. */
  readonly request: string;

  /**
   * Creates the error from what the server answered; the message is built
   * from `request`, `code` and the Status's `reason` and `message` (or
   * `bodyDescription`), and never throws, however malformed `status` is.
   */
  constructor(options: KubeStatusErrorOptions) {
    const { request = "", status, bodyDescription } = options;
    // A code that is not a number (a malformed Status's `"410"`) reads as 500.
    const code = typeof options.code === "number" && !Number.isNaN(options.code)
      ? options.code
      : 500;
    const reason = text(status?.reason);
    let detail = text(status?.message) || text(bodyDescription);
    if (detail.length > MAX_DETAIL) detail = `${detail.slice(0, MAX_DETAIL)}…`;
    const head = typeof request === "string" && request ? `${request}: ` : "";
    super(`${head}${code}${reason ? ` ${reason}` : ""}${detail ? `: ${detail}` : ""}`);
    this.name = "KubeStatusError";
    this.code = code;
    this.reason = reason;
    this.status = status;
    this.retryAfterMs = validMs(options.retryAfterMs) ?? retryAfterMsFromStatus(status);
    this.request = request;
  }

  /**
   * The error a `Status` object stands for, wherever it came from (a watch
   * ERROR event, a `200` body that was a Status instead of a list, a bare
   * Status line in a watch stream). `code` is the Status's `code` when it is
   * an integer from 400 to 599, else `fallbackCode`; `retryAfterMs` comes
   * from `details.retryAfterSeconds` when valid. Never throws, whatever
   * `status` holds.
   */
  static fromStatus(
    status: unknown,
    options: { request?: string; fallbackCode?: number } = {},
  ): KubeStatusError {
    const { request, fallbackCode = 500 } = options;
    const obj = status !== null && typeof status === "object" && !Array.isArray(status)
      ? status as Status
      : undefined;
    const raw = obj?.code;
    const code = typeof raw === "number" && Number.isInteger(raw) && raw >= 400 && raw < 600
      ? raw
      : fallbackCode;
    return new KubeStatusError({
      code,
      request,
      status: obj,
      bodyDescription: obj ? undefined : "the Status is not an object",
    });
  }

  /** The Status `details.causes[].reason` values (only the non-empty strings). */
  get causes(): string[] {
    const details: unknown = this.status?.details;
    if (details === null || typeof details !== "object") return [];
    const causes: unknown = (details as { causes?: unknown }).causes;
    if (!Array.isArray(causes)) return [];
    const out: string[] = [];
    for (const c of causes) {
      const reason: unknown = c !== null && typeof c === "object" ? c.reason : undefined;
      if (typeof reason === "string" && reason !== "") out.push(reason);
    }
    return out;
  }
}
