/**
 * The checkpoint format, version 1: UTF-8 text, one compact JSON value per
 * line, each line ending with `\n`:
 *
 * ```text
 * {"format":"kube-reflector-checkpoint","version":1,"savedAt":"…","resourceVersion":"…","count":N,"identity":{…}}
 * {…one object…}                                            (N lines)
 * {"end":"kube-reflector-checkpoint","count":N,"checksum":"32 hex digits"}
 * ```
 *
 * `checksum` is the 4-lane FNV-1a of `_fnv1a.ts` over the UTF-8 bytes of
 * every line before the end marker, each with its `\n`. Every later version
 * keeps a first line that is a JSON object with `format` and an integer
 * `version`, so that an older reader can tell it is newer.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import { Fnv1a4 } from "./_fnv1a.ts";
import { TurnTaker } from "./_yield.ts";

/** The `format` field of every checkpoint's first line. */
export const FORMAT = "kube-reflector-checkpoint";
/** The format version this library writes and reads. */
export const VERSION = 1;

/** The first line. */
export interface CheckpointHeader {
  format: typeof FORMAT;
  version: number;
  savedAt: string;
  resourceVersion: string;
  count: number;
  identity: CheckpointIdentity;
}

/** The last line. */
export interface CheckpointTrailer {
  end: typeof FORMAT;
  count: number;
  checksum: string;
}

/** What the encoder reports to its caller (it runs inside the storage's `put`). */
export interface EncodeState {
  bytes: number;
  finished: boolean;
  /** An error of the encoder's own (a bad item), told apart from the storage's. */
  error?: unknown;
}

const NEWLINE = "\n";

/** Whether a value has the shape of a Kubernetes object (an object whose `metadata` is an object). */
export function isObjectLike(value: unknown): value is KubeObject {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const meta = (value as { metadata?: unknown }).metadata;
  return meta !== null && typeof meta === "object" && !Array.isArray(meta);
}

/**
 * Encodes a checkpoint as chunks of about `chunkSize` UTF-16 code units of
 * text (so at least that many bytes; 64 Ki by default), never the whole
 * text at once, giving the event loop a turn about every MiB.
 */
export async function* encodeCheckpoint(
  header: CheckpointHeader,
  items: readonly KubeObjectLike[],
  state: EncodeState,
  signal: AbortSignal | undefined,
  chunkSize = 64 * 1024,
): AsyncGenerator<Uint8Array, void, undefined> {
  const encoder = new TextEncoder();
  const turns = new TurnTaker();
  const hash = new Fnv1a4();
  let parts: string[] = [];
  let length = 0;
  const line = (text: string) => {
    parts.push(text, NEWLINE);
    length += text.length + 1;
  };
  const flush = (): Uint8Array => {
    const bytes = encoder.encode(parts.join(""));
    parts = [];
    length = 0;
    state.bytes += bytes.length;
    return bytes;
  };
  try {
    signal?.throwIfAborted();
    line(JSON.stringify(header));
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (!isObjectLike(item)) {
        throw new TypeError(
          `saveCheckpoint: item ${i} is not a Kubernetes object (no metadata object)`,
        );
      }
      line(JSON.stringify(item));
      if (length >= chunkSize) {
        const chunk = flush();
        hash.update(chunk);
        yield chunk;
        signal?.throwIfAborted();
        await turns.add(chunk.length);
      }
    }
    const last = flush();
    hash.update(last);
    const trailer: CheckpointTrailer = {
      end: FORMAT,
      count: items.length,
      checksum: hash.digest(),
    };
    line(JSON.stringify(trailer));
    const end = flush();
    const final = new Uint8Array(last.byteLength + end.byteLength);
    final.set(last);
    final.set(end, last.byteLength);
    yield final;
    state.finished = true;
  } catch (err) {
    if (!signal?.aborted) state.error = err;
    throw err;
  }
}
