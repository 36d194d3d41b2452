/**
 * Reading what is stored under a checkpoint's key: a version 2 head, or
 * the start of a version 1 checkpoint (or anything else) left as a stream
 * for the caller, and reading whole pieces.
 *
 * @module
 */
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { checkHead, type Head, HEAD_VERSION, MAX_HEAD_BYTES } from "./_head.ts";
import { FORMAT } from "./_format.ts";
import { abortable } from "../async/_abortable.ts";

/** What {@linkcode readStored} found. */
export type Stored =
  | { kind: "none" }
  | { kind: "head"; head: Head; bytes: number }
  /** Not a head: the chunks read so far, and the rest of the value. */
  | { kind: "stream"; read: Uint8Array[]; rest: AsyncIterator<Uint8Array> };

/** Releases a value nobody will read (its iterator's `return()`), e.g. an open file. */
export function release(body: AsyncIterable<Uint8Array> | undefined): unknown {
  try {
    return Promise.resolve(body?.[Symbol.asyncIterator]().return?.()).catch(() => {});
  } catch {
    return undefined; // a return() that throws: nothing more to release
  }
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * Reads the value under `key` up to its first line. A version 2 head is
 * read whole and checked (a damaged one throws a `"corrupt"`
 * {@linkcode CheckpointError}), a later version throws a `"newer-format"`
 * one (without reading further); anything else comes back as a stream to
 * go on reading (or to release). Each read is raced against `signal`.
 */
export async function readStored(
  storage: CheckpointStorage,
  key: string,
  signal: AbortSignal | undefined,
): Promise<Stored> {
  const body = await abortable(storage.get(key, { signal }), signal, { dispose: release });
  if (body === undefined) return { kind: "none" };
  const it = body[Symbol.asyncIterator]();
  const read: Uint8Array[] = [];
  let length = 0;
  let newline = -1;
  let done = false;
  try {
    while (newline < 0 && length <= MAX_HEAD_BYTES) {
      const r = await abortable(it.next(), signal);
      if (r.done) {
        done = true;
        break;
      }
      const at = r.value.indexOf(10);
      if (at >= 0) newline = length + at;
      read.push(r.value);
      length += r.value.byteLength;
    }
    const first = newline >= 0
      ? parseFirstLine(concat(read, length).subarray(0, newline))
      : undefined;
    if (
      first?.format === FORMAT && typeof first.version === "number" &&
      Number.isInteger(first.version) && first.version > HEAD_VERSION
    ) {
      throw new CheckpointError(
        "newer-format",
        key,
        `format version ${first.version}, newer than this library's (${HEAD_VERSION}); upgrade to read it`,
      );
    }
    if (first?.format !== FORMAT || first.version !== HEAD_VERSION) {
      return { kind: "stream", read, rest: done ? emptyIterator() : it };
    }
    // a head: small, read to its end
    while (!done) {
      const r = await abortable(it.next(), signal);
      if (r.done) break;
      read.push(r.value);
      length += r.value.byteLength;
      if (length > MAX_HEAD_BYTES) {
        throw new CheckpointError(
          "corrupt",
          key,
          `the head is larger than ${MAX_HEAD_BYTES} bytes`,
        );
      }
    }
    done = true;
    const bytes = concat(read, length);
    return { kind: "head", head: checkHead(key, bytes, first), bytes: length };
  } catch (err) {
    done = true;
    throw err;
  } finally {
    if (done) closeQuietly(it);
  }
}

function emptyIterator(): AsyncIterator<Uint8Array> {
  return { next: () => Promise.resolve({ done: true, value: undefined }) };
}

function parseFirstLine(bytes: Uint8Array): { format?: unknown; version?: unknown } | undefined {
  try {
    const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    return value !== null && typeof value === "object" ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a whole piece (a log piece: small); `undefined` when it is missing;
 * a `"corrupt"` {@linkcode CheckpointError} as soon as it passes `maxBytes`.
 * Raced against `signal`.
 */
export async function readWhole(
  storage: CheckpointStorage,
  key: string,
  signal: AbortSignal | undefined,
  maxBytes = Infinity,
): Promise<Uint8Array | undefined> {
  const body = await abortable(storage.get(key, { signal }), signal, { dispose: release });
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  let length = 0;
  const it = body[Symbol.asyncIterator]();
  try {
    while (true) {
      const r = await abortable(it.next(), signal);
      if (r.done) break;
      chunks.push(r.value);
      length += r.value.byteLength;
      if (length > maxBytes) {
        // no more is read than its head says it holds
        throw new CheckpointError(
          "corrupt",
          key,
          `longer than the ${maxBytes} bytes its head says`,
        );
      }
    }
  } finally {
    closeQuietly(it);
  }
  return concat(chunks, length);
}

/** Ends an iterator, ignoring whatever its `return()` says. */
function closeQuietly(it: AsyncIterator<Uint8Array>): void {
  try {
    it.return?.()?.catch?.(() => {});
  } catch { /* a generator still running: it ends when its pending read settles */ }
}
