/**
 * `Retry-After`, validated: from a `Status`'s `details.retryAfterSeconds`
 * (HTTP answers and watch ERROR events) and from the HTTP header. Never
 * capped here: a cap is the caller's policy (the watcher's is
 * `maxRetryAfterMs`).
 *
 * @module
 */

/**
 * A wait in milliseconds from a number of seconds, or `undefined` unless
 * `seconds` is a finite, non-negative number (a JSON number; numeric
 * strings, `NaN`, `Infinity`, negative numbers, objects are ignored).
 */
export function retryAfterMsFromSeconds(seconds: unknown): number | undefined {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return undefined;
  const ms = seconds * 1000;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The wait a Kubernetes `Status` asks for (`details.retryAfterSeconds`), in
 * milliseconds, or `undefined` when it asks for none or the value is not a
 * finite, non-negative number. Never throws, whatever `status` is (a
 * malformed body, `null`, a string...).
 * Use it for HTTP answers and for watch ERROR events alike.
 */
export function retryAfterMsFromStatus(status: unknown): number | undefined {
  if (status === null || typeof status !== "object") return undefined;
  const details = (status as { details?: unknown }).details;
  if (details === null || typeof details !== "object") return undefined;
  return retryAfterMsFromSeconds((details as { retryAfterSeconds?: unknown }).retryAfterSeconds);
}

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d{2}:\\d{2}:\\d{2}";
/** IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) and RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`). */
const GMT_DATE = new RegExp(
  `^(?:${DAY}, \\d{2} ${MONTH} \\d{4}|${LONG_DAY}, \\d{2}-${MONTH}-\\d{2}) ${TIME} GMT$`,
);
/** asctime (`Sun Nov  6 08:49:37 1994`), which is in UTC though it does not say so. */
const ASCTIME = new RegExp(`^${DAY} ${MONTH} (?: \\d|\\d{2}) ${TIME} \\d{4}$`);
const SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * Parses an HTTP `Retry-After` header value into milliseconds: delay
 * seconds (`"120"`; a decimal fraction is tolerated), or an HTTP-date
 * (a date in the past gives `0`). Anything else (`"soon"`, `"-5"`,
 * `"NaN"`, `"Infinity"`, an empty or repeated header) gives `undefined`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { retryAfterMsFromHeader } from "../../mod.ts";
 *
 * assert.equal(retryAfterMsFromHeader("3"), 3_000);
 * const now = Date.parse("Sun, 06 Nov 1994 08:49:30 GMT");
 * assert.equal(retryAfterMsFromHeader("Sun, 06 Nov 1994 08:49:37 GMT", now), 7_000);
 * assert.equal(retryAfterMsFromHeader("soon"), undefined); // ignored, not "retry at once"
 * ```
 */
export function retryAfterMsFromHeader(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (SECONDS.test(text)) return retryAfterMsFromSeconds(Number(text));
  let date = NaN;
  if (GMT_DATE.test(text)) date = Date.parse(text);
  else if (ASCTIME.test(text)) date = Date.parse(`${text} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
