import { KubeConflictError } from "../api/kube_conflict_error.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { retryAfterMsFromHeader } from "../api/retry_after.ts";
import type { Status } from "../api/types.ts";

const MAX_ERROR_BODY = 64 * 1024;

/**
 * Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds;
 * `undefined` for anything else ("soon", "-5", "NaN", "Infinity"). A date
 * in the past gives 0. Not capped (the watcher caps).
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  return retryAfterMsFromHeader(value, now);
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  // ignoreBOM: Deno's decoder otherwise drops a U+FEFF at the start of every chunk.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let text = "";
  try {
    while (text.length < MAX_ERROR_BODY) {
      const { value, done } = await reader.read();
      if (done) return text + decoder.decode();
      text += decoder.decode(value, { stream: true });
    }
    return text;
  } finally {
    reader.cancel().catch(() => {});
  }
}

function asStatus(text: string): Status | undefined {
  try {
    // A byte order mark at the very start of the body is tolerated (as `Response.json()` does).
    const parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    if (
      parsed && typeof parsed === "object" && !Array.isArray(parsed) && parsed.kind === "Status"
    ) {
      return parsed as Status;
    }
  } catch {
    // not JSON: described by content type and size instead
  }
  return undefined;
}

/**
 * Turns a failed response into a {@linkcode KubeStatusError} (a
 * {@linkcode KubeConflictError} for a 409 other than `AlreadyExists`), consuming
 * (at most 64 KiB of) its body. A body that is not a Status is described by
 * its content type and size, never quoted. `Retry-After` comes from the
 * header, else from the Status's `details.retryAfterSeconds`; invalid
 * values of either are ignored.
 */
export async function statusErrorFromResponse(
  res: Response,
  request: string,
): Promise<KubeStatusError> {
  let text = "";
  try {
    text = await readCapped(res);
  } catch {
    // the body failed mid-way: the status code alone still tells the story
  }
  const status = asStatus(text);
  // Invalid or absent header: KubeStatusError falls back to details.retryAfterSeconds.
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"));
  const type = res.headers.get("content-type") ?? "no content type";
  const bodyDescription = status
    ? undefined
    : `${res.statusText || "error"} (${type.split(";")[0]}, ${
      new TextEncoder().encode(text).length
    } bytes)`;
  const options = { code: res.status, request, status, retryAfterMs, bodyDescription };
  // A 409 is a conflict (modified since read) unless the name was taken (client-go's IsConflict).
  if (res.status === 409 && status?.reason !== "AlreadyExists") {
    return new KubeConflictError(options);
  }
  return new KubeStatusError(options);
}
