/**
 * Where the bytes stop being whole UTF-8 sequences: `bytes.length`, or the
 * start of a lead byte at the end whose sequence needs more bytes than
 * follow it (at most 3 bytes are left over). Anything else, valid or not,
 * is left to the decoder to judge.
 */
function completeEnd(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    const b = bytes[n - back];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const size = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return size > back ? n - back : n;
  }
  return n;
}

/** A chunk as a `Uint8Array` (any typed array or `ArrayBuffer`, from any realm), or undefined. */
function asBytes(chunk: unknown): Uint8Array | undefined {
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) {
    return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }
  if (Object.prototype.toString.call(chunk) === "[object ArrayBuffer]") {
    return new Uint8Array(chunk as ArrayBuffer);
  }
  return undefined;
}

/**
 * A streaming UTF-8 decoder that refuses invalid bytes, as
 * `new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })` with
 * `{ stream: true }` does, but at the cost of a replacing decoder: each
 * chunk's whole sequences are decoded without `fatal` (Deno's fatal
 * decoder is about ten times slower; Node's leaves its fast path in stream
 * mode), and only a chunk whose text holds U+FFFD, a replacement or a real
 * one, is decoded again with `fatal` to tell which. An incomplete sequence
 * at a chunk's end (at most 3 bytes) is held and put before the next one.
 * Every U+FEFF is kept.
 */
export class StrictUtf8Decoder {
  #loose = new TextDecoder("utf-8", { ignoreBOM: true });
  #fatal: TextDecoder | undefined;
  #held: Uint8Array | undefined;

  /**
   * The text of `chunk`'s whole sequences (with what was held before it).
   * Throws a `TypeError` for bytes that are not UTF-8 or a chunk that is
   * not bytes.
   */
  decode(chunk: Uint8Array): string {
    let bytes = asBytes(chunk);
    if (bytes === undefined) throw new TypeError("a body chunk is not bytes");
    const held = this.#held;
    if (held !== undefined) {
      const joined = new Uint8Array(held.length + bytes.length);
      joined.set(held);
      joined.set(bytes, held.length);
      bytes = joined;
      this.#held = undefined;
    }
    const end = completeEnd(bytes);
    if (end < bytes.length) {
      this.#held = bytes.slice(end);
      bytes = bytes.subarray(0, end);
    }
    if (bytes.length === 0) return "";
    const text = this.#loose.decode(bytes);
    if (text.includes("\uFFFD")) {
      // Throws if it is a replacement; if not, the texts are the same.
      (this.#fatal ??= new TextDecoder("utf-8", { ignoreBOM: true, fatal: true })).decode(bytes);
    }
    return text;
  }

  /** Ends the input: throws a `TypeError` if a sequence was left incomplete. */
  end(): void {
    if (this.#held === undefined) return;
    this.#held = undefined;
    throw new TypeError("the body ends inside a UTF-8 sequence");
  }
}
