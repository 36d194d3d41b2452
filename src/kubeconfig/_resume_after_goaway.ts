/**
 * An HTTP/2 answer whose body undici fails because a GOAWAY closed its
 * connection right behind the answer (Go's server sends the GOAWAY of a
 * graceful shutdown, or of kube-apiserver's `--goaway-chance`, after the
 * headers and before the data; undici closes the socket on any GOAWAY and
 * drops what it had queued): when the consumer has not been given a byte
 * yet, the request is sent again once (`retry`, over HTTP/1.1) and the body
 * goes on from that answer, provided it has the same status. Otherwise the
 * body fails as it did (or with the retry's own error, an abort's included).
 * A body cancelled meanwhile releases the retry's answer when it comes.
 *
 * @module
 */

import { withBody } from "./_with_body.ts";

/** `res` with a body that, failing as `lost` says before its first byte, continues from `retry()`'s answer. */
export function resumeAfterGoAway(
  res: Response,
  retry: () => Promise<Response>,
  lost: (err: unknown) => boolean,
): Response {
  if (res.body === null) return res;
  let reader = res.body.getReader();
  let delivered = false;
  let retried = false;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (!cancelled) {
        try {
          const r = await reader.read();
          if (cancelled) return;
          if (r.done) return controller.close();
          if (r.value.byteLength === 0) continue;
          delivered = true;
          return controller.enqueue(r.value);
        } catch (err) {
          if (cancelled) return;
          if (delivered || retried || !lost(err)) throw err;
          retried = true;
          // (a retry that fails, the caller's abort included, fails the body with its own error)
          const again = await retry();
          if (cancelled || again.status !== res.status || again.body === null) {
            await again.body?.cancel().catch(() => {});
            if (cancelled) return;
            throw err;
          }
          reader = again.body.getReader();
        }
      }
    },
    cancel(reason) {
      cancelled = true;
      // (the failed first body's reader, or the retry's: either way released, and cancel() settles)
      return reader.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  return withBody(res, stream);
}
