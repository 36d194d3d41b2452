/**
 * Whether `bytes[at..]` (1 to 3 bytes) can still become one whole UTF-8
 * sequence: a lead byte C2–F4 whose sequence is longer than what follows
 * it, each byte after it in the range UTF-8 allows there. Anything else is
 * left to the decoder to judge at once.
 */
function unfinished(bytes: Uint8Array, at: number): boolean {
  const n = bytes.length - at;
  const lead = bytes[at];
  const size = lead >= 0xc2 && lead <= 0xdf
    ? 2
    : lead >= 0xe0 && lead <= 0xef
    ? 3
    : lead >= 0xf0 && lead <= 0xf4
    ? 4
    : 0;
  if (size <= n) return false;
  if (n >= 2) {
    const b = bytes[at + 1];
    // The second byte's range depends on the lead (no overlongs, no surrogates, nothing past U+10FFFF).
    const lo = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const hi = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    if (b < lo || b > hi) return false;
  }
  return n < 3 || (bytes[at + 2] & 0xc0) === 0x80;
}

/**
 * Where the bytes stop being whole UTF-8 sequences: the start of an
 * unfinished sequence at the end (at most 3 bytes), or `bytes.length`.
 */
function completeEnd(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let back = 1; back <= 3 && back <= n; back++) {
    if ((bytes[n - back] & 0xc0) === 0x80) continue; // a continuation byte: look further back
    return unfinished(bytes, n - back) ? n - back : n;
  }
  return n;
}

const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")!.get!;
const sharedByteLength = typeof SharedArrayBuffer === "function"
  ? Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, "byteLength")?.get
  : undefined;

/** Whether `value` is an ArrayBuffer or SharedArrayBuffer of any realm (a brand check, not a tag). */
function isBuffer(value: unknown): value is ArrayBufferLike {
  for (const getter of [bufferByteLength, sharedByteLength]) {
    try {
      getter?.call(value);
      if (getter) return true;
    } catch {
      // not this kind of buffer
    }
  }
  return false;
}

/** A chunk as a `Uint8Array` (any typed array, DataView or buffer, from any realm), or undefined. */
function asBytes(chunk: unknown): Uint8Array | undefined {
  try {
    if (chunk instanceof Uint8Array) return chunk;
    if (ArrayBuffer.isView(chunk)) {
      return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    if (isBuffer(chunk)) return new Uint8Array(chunk);
  } catch {
    // a detached view, a proxy that throws: not bytes
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
 * one, is decoded again with `fatal` to tell which. The start of a
 * sequence that a chunk's end cuts (at most 3 bytes, copied) is held and
 * put before the next chunk. Every U+FEFF is kept.
 */
export class StrictUtf8Decoder {
  #loose = new TextDecoder("utf-8", { ignoreBOM: true });
  #fatal: TextDecoder | undefined;
  #held: Uint8Array | undefined;
  #decoded = 0;

  /**
   * How many bytes were decoded so far (given bytes less those held): where
   * the bytes of the next `decode` start, after a failure where the bytes
   * that failed start, and after `end()` fails where the unfinished
   * sequence starts.
   */
  get decodedBytes(): number {
    return this.#decoded;
  }

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
      // A copy: a Node Buffer's subarray and slice are both views, and its producer may reuse it.
      this.#held = new Uint8Array(bytes.subarray(end));
      bytes = bytes.subarray(0, end);
    }
    if (bytes.length === 0) return "";
    const text = this.#loose.decode(bytes);
    if (text.includes("\uFFFD")) {
      // Throws if it is a replacement; if not, the texts are the same.
      (this.#fatal ??= new TextDecoder("utf-8", { ignoreBOM: true, fatal: true })).decode(bytes);
    }
    this.#decoded += bytes.length;
    return text;
  }

  /** Ends the input: throws a `TypeError` if a sequence was left unfinished. */
  end(): void {
    if (this.#held === undefined) return;
    this.#held = undefined;
    throw new TypeError("the body ends inside a UTF-8 sequence");
  }
}
