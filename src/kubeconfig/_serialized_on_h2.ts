/**
 * Whether undici's h2 client would hold this request until its connection
 * is otherwise idle (lib/dispatcher/client-h2.js `busy`): any method but
 * GET and HEAD (not idempotent by undici's default), or any body (undici's
 * fetch sends every body as a stream). Such requests (writes) go over a
 * separate HTTP/1.1 agent, never behind the watches of an h2 connection.
 *
 * @module
 */

/** True for a request undici's h2 client would serialize behind the others on its connection. */
export function serializedOnH2(input: RequestInfo | URL, init?: RequestInit): boolean {
  const request = typeof Request === "function" && input instanceof Request ? input : undefined;
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  if (method !== "GET" && method !== "HEAD") return true;
  return (init?.body ?? request?.body ?? null) !== null;
}
