/**
 * A log piece of an incremental checkpoint: the net changes of one save,
 * from version `from` to `to`, each key once, with its final object or as
 * deleted. UTF-8 text, one compact JSON value per line:
 *
 * ```text
 * {"format":"kube-reflector-checkpoint-log","version":1,"base":"gen","from":"…","to":"…","count":N}
 * {"k":"namespace/name","o":{…the object…}}      (changed or added)
 * {"k":"namespace/name"}                          (deleted)
 * {"end":"kube-reflector-checkpoint-log","count":N,"checksum":"32 hex digits"}
 * ```
 *
 * Net changes are idempotent: applied to the objects at any version between
 * `from` and `to`, they give the objects at `to` (a key not in the piece did
 * not change in between). So two saves that race leave two consistent
 * chains, and whichever head is written last is whole.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { isObjectLike } from "./_format.ts";
import { Fnv1a4 } from "./_fnv1a.ts";

/** The `format` of a log piece. */
export const LOG_FORMAT = "kube-reflector-checkpoint-log";

/** One net change: the object now, or `undefined` for a deleted key. */
export type NetChange<T> = readonly [key: string, object: T | undefined];

/** The first line of a log piece. */
export interface LogHeader {
  format: typeof LOG_FORMAT;
  version: 1;
  base: string;
  from: string;
  to: string;
  count: number;
}

/** Encodes a log piece (small: it holds only changes). */
export function encodeLogPiece<T extends KubeObjectLike>(
  header: LogHeader,
  changes: readonly NetChange<T>[],
): Uint8Array {
  const lines: string[] = [JSON.stringify(header), "\n"];
  for (let i = 0; i < changes.length; i++) {
    const [k, o] = changes[i];
    if (typeof k !== "string" || k === "") {
      throw new TypeError(`saveCheckpoint: change ${i} has no key`);
    }
    if (o !== undefined && !isObjectLike(o)) {
      throw new TypeError(
        `saveCheckpoint: change ${i} is not a Kubernetes object (no metadata object)`,
      );
    }
    lines.push(JSON.stringify(o === undefined ? { k } : { k, o }), "\n");
  }
  const body = new TextEncoder().encode(lines.join(""));
  const hash = new Fnv1a4();
  hash.update(body);
  const end = new TextEncoder().encode(
    JSON.stringify({ end: LOG_FORMAT, count: changes.length, checksum: hash.digest() }) + "\n",
  );
  const out = new Uint8Array(body.byteLength + end.byteLength);
  out.set(body);
  out.set(end, body.byteLength);
  return out;
}

/**
 * Decodes and checks a log piece read whole, against what its head says of
 * it (`expected`). Throws a {@linkcode CheckpointError} (`"corrupt"`), never
 * hands out part of a piece.
 */
export function decodeLogPiece<T extends KubeObjectLike>(
  key: string,
  bytes: Uint8Array,
  expected: Omit<LogHeader, "format" | "version">,
): NetChange<T>[] {
  const fail = (detail: string): never => {
    throw new CheckpointError("corrupt", key, `log piece: ${detail}`);
  };
  let text = "";
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    fail("not valid UTF-8");
  }
  if (!text.endsWith("\n")) fail("it does not end with its end marker");
  const lines = text.slice(0, -1).split("\n");
  const parse = (line: string, what: string): Record<string, unknown> => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      fail(`${what} is not JSON`); // JSON.parse's message quotes the text: never passed on
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      fail(`${what} is not a JSON object`);
    }
    return value as Record<string, unknown>;
  };
  const header = parse(lines[0], "the header");
  if (header.format !== LOG_FORMAT || header.version !== 1) fail("no log header");
  for (const field of ["base", "from", "to", "count"] as const) {
    if (header[field] !== expected[field]) {
      fail(`its ${field} is not the one its head names (a piece of another save)`);
    }
  }
  if (lines.length !== expected.count + 2) fail(`expected ${expected.count} changes`);
  const trailer = parse(lines[lines.length - 1], "the end marker");
  if (trailer.end !== LOG_FORMAT || trailer.count !== expected.count) fail("no end marker");
  const hash = new Fnv1a4();
  hash.update(bytes.subarray(0, bytes.lastIndexOf(10, bytes.byteLength - 2) + 1));
  if (trailer.checksum !== hash.digest()) fail("checksum mismatch");
  const out: NetChange<T>[] = [];
  for (let i = 1; i < lines.length - 1; i++) {
    const line = parse(lines[i], `change ${i}`);
    if (typeof line.k !== "string" || line.k === "") fail(`change ${i} has no key`);
    if (line.o !== undefined && !isObjectLike(line.o)) {
      fail(`change ${i} is not a Kubernetes object`);
    }
    out.push([line.k as string, line.o as T | undefined]);
  }
  return out;
}
