import { KubeStatusError } from "../api/kube_status_error.ts";
import type { Status } from "../api/types.ts";

const MAX_ERROR_BODY = 64 * 1024;

/** Parses `Retry-After` (delta seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value.trim());
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
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
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && parsed.kind === "Status") return parsed as Status;
  } catch {
    // not JSON: described by content type and size instead
  }
  return undefined;
}

/**
 * Turns a failed response into a {@linkcode KubeStatusError}, consuming
 * (at most 64 KiB of) its body. A body that is not a Status is described by
 * its content type and size, never quoted.
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
  const retryAfterMs = parseRetryAfter(res.headers.get("retry-after")) ??
    (status?.details?.retryAfterSeconds !== undefined
      ? status.details.retryAfterSeconds * 1000
      : undefined);
  const type = res.headers.get("content-type") ?? "no content type";
  const bodyDescription = status
    ? undefined
    : `${res.statusText || "error"} (${type.split(";")[0]}, ${
      new TextEncoder().encode(text).length
    } bytes)`;
  return new KubeStatusError({ code: res.status, request, status, retryAfterMs, bodyDescription });
}
