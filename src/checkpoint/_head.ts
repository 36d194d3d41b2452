/**
 * The head of an incremental checkpoint (format version 2): the small value
 * under the checkpoint's key that names its pieces. Two lines of UTF-8
 * JSON, each ending with `\n`:
 *
 * ```text
 * {"format":"kube-reflector-checkpoint","version":2,"savedAt":"…","resourceVersion":"…","count":N,"identity":{…},"base":{…},"log":[…],"partial":{…}}
 * {"end":"kube-reflector-checkpoint","checksum":"32 hex digits"}
 * ```
 *
 * `base` names the snapshot (a version 1 checkpoint stored under
 * `key + "/base/" + gen`), `log` the net changes since it, one piece per
 * save (`key + "/log/" + gen`, see `_log_piece.ts`), in order; `partial`,
 * when present, a list in progress (pages saved under
 * `key + "/page/" + gen`, each a version 1 checkpoint at the list's
 * version). `resourceVersion` is where the objects are exact: the last log
 * piece's `to`, or later when only the version advanced. The checksum is
 * the 4-lane FNV-1a of the first line and its `\n`.
 *
 * @module
 */
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { FORMAT } from "./_format.ts";
import { Fnv1a4 } from "./_fnv1a.ts";
import { isIdentity } from "./_identity.ts";

/** The format version of a head. */
export const HEAD_VERSION = 2;
/** The largest head read (a head names at most a few hundred pieces). */
export const MAX_HEAD_BYTES = 1024 * 1024;

/** The base snapshot a head names. */
export interface HeadBase {
  gen: string;
  resourceVersion: string;
  count: number;
  bytes: number;
}

/** One log piece a head names: the net changes from `from` to `to`. */
export interface HeadLogEntry {
  gen: string;
  from: string;
  to: string;
  count: number;
  bytes: number;
}

/** A list in progress: its saved pages, where it goes on, and its version. */
export interface HeadPartial {
  /** The page pieces, in list order. */
  pages: string[];
  /** The continue token of the next page. */
  continue: string;
  /** The version the list is consistent at. */
  resourceVersion: string;
  /** Objects in the saved pages. */
  count: number;
  /** What the server said was left (`remainingItemCount`), when it said. */
  remaining?: number;
}

/** The first line of a head. */
export interface Head {
  format: typeof FORMAT;
  version: typeof HEAD_VERSION;
  savedAt: string;
  resourceVersion: string;
  count: number;
  identity: CheckpointIdentity;
  /** The snapshot; absent while the first list is still in progress (`resourceVersion` is then `""`). */
  base?: HeadBase;
  log: HeadLogEntry[];
  partial?: HeadPartial;
}

/** The key of a piece. */
export function pieceKey(key: string, kind: "base" | "log" | "page", gen: string): string {
  return `${key}/${kind}/${gen}`;
}

/** The keys of every piece a head names. */
export function piecesOf(key: string, head: Head): string[] {
  return [
    ...(head.base ? [pieceKey(key, "base", head.base.gen)] : []),
    ...head.log.map((e) => pieceKey(key, "log", e.gen)),
    ...(head.partial?.pages ?? []).map((g) => pieceKey(key, "page", g)),
  ];
}

/** The head as the bytes to store. */
export function encodeHead(head: Head): Uint8Array {
  const line = JSON.stringify(head) + "\n";
  const first = new TextEncoder().encode(line);
  const hash = new Fnv1a4();
  hash.update(first);
  const end = new TextEncoder().encode(
    JSON.stringify({ end: FORMAT, checksum: hash.digest() }) + "\n",
  );
  const out = new Uint8Array(first.byteLength + end.byteLength);
  out.set(first);
  out.set(end, first.byteLength);
  return out;
}

const GEN = /^[0-9a-f]{16}$/;
const count = (n: unknown): n is number =>
  typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
const version = (v: unknown): v is string => typeof v === "string" && v !== "";

function isBase(b: unknown): b is HeadBase {
  const v = b as Partial<HeadBase> | null;
  return v !== null && typeof v === "object" && typeof v.gen === "string" && GEN.test(v.gen) &&
    version(v.resourceVersion) && count(v.count) && count(v.bytes);
}

function isLogEntry(e: unknown): e is HeadLogEntry {
  const v = e as Partial<HeadLogEntry> | null;
  return v !== null && typeof v === "object" && typeof v.gen === "string" && GEN.test(v.gen) &&
    version(v.from) && version(v.to) && count(v.count) && count(v.bytes);
}

function isPartial(p: unknown): p is HeadPartial {
  const v = p as Partial<HeadPartial> | null;
  return v !== null && typeof v === "object" && Array.isArray(v.pages) &&
    v.pages.every((g) => typeof g === "string" && GEN.test(g)) &&
    typeof v.continue === "string" && v.continue !== "" && version(v.resourceVersion) &&
    count(v.count) && (v.remaining === undefined || count(v.remaining));
}

/**
 * Checks the bytes of a head whose first line was parsed as `first`: its
 * end marker and checksum, then its shape. Throws a `"corrupt"`
 * {@linkcode CheckpointError}.
 */
export function checkHead(key: string, bytes: Uint8Array, first: unknown): Head {
  const newline = bytes.indexOf(10);
  const hash = new Fnv1a4();
  hash.update(bytes.subarray(0, newline + 1));
  let end: { end?: unknown; checksum?: unknown } | null;
  try {
    const rest = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(newline + 1));
    if (!rest.endsWith("\n") || rest.indexOf("\n") !== rest.length - 1) throw new Error();
    end = JSON.parse(rest);
  } catch {
    throw new CheckpointError("corrupt", key, "the head's end marker is missing or malformed");
  }
  if (end === null || typeof end !== "object" || end.end !== FORMAT) {
    throw new CheckpointError("corrupt", key, "the head's end marker is missing or malformed");
  }
  if (end.checksum !== hash.digest()) {
    throw new CheckpointError("corrupt", key, "the head's checksum does not match");
  }
  const h = first as Partial<Head>;
  const complete = h.base !== undefined;
  if (
    typeof h.savedAt !== "string" || !count(h.count) || !isIdentity(h.identity) ||
    !Array.isArray(h.log) || !h.log.every(isLogEntry) ||
    (h.partial !== undefined && !isPartial(h.partial)) ||
    (complete
      ? !isBase(h.base) || !version(h.resourceVersion)
      : h.resourceVersion !== "" || h.log.length > 0 || h.count !== 0 || h.partial === undefined)
  ) {
    throw new CheckpointError("corrupt", key, "the head is malformed");
  }
  return h as Head;
}
