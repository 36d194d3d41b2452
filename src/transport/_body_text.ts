import { KubeNetworkError } from "../api/errors.ts";

/**
 * A response body as decoded text, chunk by chunk (UTF-8 characters split
 * across chunks are joined). The generator owns the body: ending early
 * (`break`, a throw in the consumer) or an abort cancels it; an abort
 * throws `signal.reason`; a connection failing mid-body throws a
 * {@linkcode KubeNetworkError} naming `what`.
 */
export async function* bodyText(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
  what: string,
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    signal?.throwIfAborted();
    while (true) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (err) {
        signal?.throwIfAborted();
        throw new KubeNetworkError(what, err);
      }
      signal?.throwIfAborted();
      if (chunk.done) {
        finished = true;
        const rest = decoder.decode();
        if (rest) yield rest;
        return;
      }
      const text = decoder.decode(chunk.value, { stream: true });
      if (text) yield text;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel(signal?.reason).catch(() => {});
    reader.releaseLock();
  }
}
