/**
 * A response like another, but with another body: what a `fetch` wrapper
 * hands on when it watches or mends a body on its way to the caller.
 *
 * @module
 */

/** `res`'s status, headers, url, redirected flag and type, with `body`. `res.status` must be 200–599. */
export function withBody(res: Response, body: ReadableStream<Uint8Array>): Response {
  const out = new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  Object.defineProperties(out, {
    url: { value: res.url },
    redirected: { value: res.redirected },
    type: { value: res.type },
  });
  return out;
}
