import { KubeNetworkError } from "../api/errors.ts";
import { StrictUtf8Decoder } from "./_strict_utf8_decoder.ts";

/**
 * The body's bytes are not valid UTF-8 (thrown by {@linkcode bodyText};
 * each decoder turns it into its own typed error). `byteOffset` is where
 * the bytes in which the bad sequence was found start: a chunk, or the
 * start of a sequence the chunk before it cut (judged with it), or for a
 * body that ends inside a sequence, where that sequence starts.
 */
export class InvalidUtf8Error extends Error {
  readonly byteOffset: number;
  constructor(byteOffset: number) {
    super(`body is not valid UTF-8 (near byte ${byteOffset})`);
    this.name = "InvalidUtf8Error";
    this.byteOffset = byteOffset;
  }
}

const BOM = 0xfeff;

/**
 * A response body as decoded text, chunk by chunk (UTF-8 characters split
 * across chunks are joined). The generator owns the body: ending early
 * (`break`, a throw in the consumer) or an abort cancels it; an abort
 * throws `signal.reason`; a connection failing mid-body throws a
 * {@linkcode KubeNetworkError} naming `what`.
 *
 * Decoding is byte-exact: every U+FEFF inside the body is kept (the
 * decoder runs with `ignoreBOM`, since Deno's stream mode would otherwise
 * drop a U+FEFF at the start of every chunk), except one byte order mark at
 * the very start of the body, which is skipped as `Response.json()` and a
 * default `TextDecoder` would (JSON text never starts with U+FEFF; a
 * Kubernetes server never sends one). Invalid UTF-8 throws an
 * {@linkcode InvalidUtf8Error} rather than being replaced with U+FFFD: a
 * proxy that mangles bytes must not silently change object content (see
 * `StrictUtf8Decoder`, which does this at the cost of a replacing decoder).
 */
export async function* bodyText(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
  what: string,
): AsyncGenerator<string, void, undefined> {
  const reader = body.getReader();
  const decoder = new StrictUtf8Decoder();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => {});
  signal?.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  let atStart = true;
  const decode = (chunk: Uint8Array): string => {
    let text: string;
    try {
      text = decoder.decode(chunk);
    } catch {
      throw new InvalidUtf8Error(decoder.decodedBytes);
    }
    if (atStart && text !== "") {
      atStart = false;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    return text;
  };
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
        try {
          decoder.end();
        } catch {
          throw new InvalidUtf8Error(decoder.decodedBytes);
        }
        return;
      }
      const text = decode(chunk.value);
      if (text) yield text;
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (!finished) await reader.cancel(signal?.reason).catch(() => {});
    // No releaseLock(): the body is read to its end or cancelled, and is
    // never read again. On Node releasing builds a TypeError for the
    // reader's `closed` promise every time (and a vm context the first time),
    // a cost a profile showed on every list page and watch.
  }
}
