/**
 * Shared by the storages that split a value across keys (key-value stores
 * with a value-size limit): cutting a byte stream into parts, the manifest
 * that names them, and reading the parts back with every check.
 *
 * @module
 */
import { CheckpointError } from "./checkpoint_error.ts";
import { abortableForEach } from "../async/_abortable.ts";
import { Fnv1a4 } from "./_fnv1a.ts";

/** The `format` of a manifest. */
export const MANIFEST_FORMAT = "kube-reflector-split-value";

/**
 * Names the parts of one value. `parts` is 0 when the value is inline (in
 * the manifest itself); otherwise every part but the last holds exactly
 * `partBytes` bytes.
 */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: 1;
  generation: string;
  parts: number;
  partBytes: number;
  bytes: number;
  checksum: string;
}

/** A fresh generation id: 16 hexadecimal digits. */
export function newGeneration(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether a parsed value is a manifest this library can read. */
export function isManifest(value: unknown): value is Manifest {
  if (value === null || typeof value !== "object") return false;
  const m = value as Record<string, unknown>;
  const count = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  return m.format === MANIFEST_FORMAT && m.version === 1 &&
    typeof m.generation === "string" && /^[0-9a-f]{16}$/.test(m.generation) &&
    count(m.parts) && count(m.partBytes) && count(m.bytes) && typeof m.checksum === "string" &&
    (m.parts === 0 || (m.partBytes as number) > 0 &&
        (m.parts as number) === Math.ceil((m.bytes as number) / (m.partBytes as number)));
}

/**
 * The error for a stored value that is not a usable manifest: `newer-format`
 * when it is a manifest of a later version, otherwise `corrupt` with `detail`.
 */
export function manifestRejection(key: string, value: unknown, detail: string): CheckpointError {
  const m = value as { format?: unknown; version?: unknown } | null;
  if (m?.format === MANIFEST_FORMAT && typeof m.version === "number" && m.version > 1) {
    return new CheckpointError(
      "newer-format",
      key,
      `manifest version ${m.version} is newer than this library's`,
    );
  }
  return new CheckpointError("corrupt", key, detail);
}

/** The result of {@linkcode splitValue}. */
export interface SplitResult {
  /** The number of parts handed to `writePart` (0 when the value fits inline). */
  parts: number;
  /** The whole value when it fits inline (`parts` is then 0). */
  inline: Uint8Array | undefined;
  bytes: number;
  checksum: string;
}

function take(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  while (offset < size) {
    const chunk = chunks[0];
    const n = Math.min(chunk.byteLength, size - offset);
    out.set(n === chunk.byteLength ? chunk : chunk.subarray(0, n), offset);
    offset += n;
    if (n === chunk.byteLength) chunks.shift();
    else chunks[0] = chunk.subarray(n);
  }
  return out;
}

/** The manifest of a value split (or kept inline) by {@linkcode splitValue} under `generation`. */
export function manifestOf(generation: string, split: SplitResult, partBytes: number): Manifest {
  return {
    format: MANIFEST_FORMAT,
    version: 1,
    generation,
    parts: split.parts,
    partBytes: split.parts === 0 ? 0 : partBytes,
    bytes: split.bytes,
    checksum: split.checksum,
  };
}

/**
 * Reads `data` and cuts it into parts of `partBytes`, handed one by one to
 * `writePart` (awaited, in order). A value of at most `inlineBytes` is not
 * cut: it comes back as `inline`. Each read of `data` is raced against
 * `signal`; `writePart` must race its own calls.
 */
export async function splitValue(
  data: AsyncIterable<Uint8Array>,
  partBytes: number,
  inlineBytes: number,
  writePart: (part: Uint8Array, index: number) => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<SplitResult> {
  const chunks: Uint8Array[] = [];
  let buffered = 0;
  let bytes = 0;
  let parts = 0;
  const hash = new Fnv1a4();
  // each chunk raced against the signal: data that keeps the put waiting cannot outlast it
  await abortableForEach(data, signal, async (chunk) => {
    if (chunk.byteLength === 0) return;
    chunks.push(chunk.slice());
    buffered += chunk.byteLength;
    bytes += chunk.byteLength;
    hash.update(chunk);
    // before the first part, hold on until the value is known not to fit inline
    while (parts > 0 ? buffered >= partBytes : buffered > Math.max(partBytes, inlineBytes)) {
      await writePart(take(chunks, partBytes), parts++);
      buffered -= partBytes;
      signal?.throwIfAborted();
    }
  });
  signal?.throwIfAborted();
  if (parts === 0 && buffered <= inlineBytes) {
    return { parts: 0, inline: take(chunks, buffered), bytes, checksum: hash.digest() };
  }
  while (buffered > 0) {
    const size = Math.min(partBytes, buffered);
    await writePart(take(chunks, size), parts++);
    buffered -= size;
    signal?.throwIfAborted();
  }
  return { parts, inline: undefined, bytes, checksum: hash.digest() };
}

/**
 * The value a manifest names, part by part, each checked (present, of the
 * right size) and the whole checked against the manifest's size and
 * checksum at the end: a missing part is `"truncated"`, a wrong size or
 * checksum `"corrupt"`.
 */
export async function* joinParts(
  key: string,
  manifest: Manifest,
  inline: Uint8Array | undefined,
  readPart: (index: number) => Promise<Uint8Array | undefined>,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array, void, undefined> {
  const hash = new Fnv1a4();
  let bytes = 0;
  if (manifest.parts === 0) {
    if (inline === undefined || inline.byteLength !== manifest.bytes) {
      throw new CheckpointError(
        "corrupt",
        key,
        "the inline value does not have the size its manifest says",
      );
    }
    hash.update(inline);
    if (hash.digest() !== manifest.checksum) {
      throw new CheckpointError("corrupt", key, "the value does not match its manifest's checksum");
    }
    if (inline.byteLength > 0) yield inline;
    return;
  }
  for (let i = 0; i < manifest.parts; i++) {
    signal?.throwIfAborted();
    const part = await readPart(i);
    signal?.throwIfAborted();
    if (part === undefined) {
      throw new CheckpointError("truncated", key, `part ${i + 1} of ${manifest.parts} is missing`);
    }
    const expected = i < manifest.parts - 1
      ? manifest.partBytes
      : manifest.bytes - manifest.partBytes * (manifest.parts - 1);
    if (part.byteLength !== expected) {
      const reason = part.byteLength < expected ? "truncated" : "corrupt";
      throw new CheckpointError(
        reason,
        key,
        `part ${i + 1} of ${manifest.parts} has ${part.byteLength} bytes, expected ${expected}`,
      );
    }
    hash.update(part);
    bytes += part.byteLength;
    yield part;
  }
  if (bytes !== manifest.bytes || hash.digest() !== manifest.checksum) {
    throw new CheckpointError("corrupt", key, "the parts do not match their manifest's checksum");
  }
}
