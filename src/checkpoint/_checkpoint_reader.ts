/**
 * Decodes a checkpoint (see `_format.ts`) pushed to it chunk by chunk,
 * whatever the chunk boundaries (inside a line, inside a UTF-8 character,
 * one byte at a time): text is decoded in stream mode and fatally (invalid
 * UTF-8 is an error, never U+FFFD), split into lines, and each line parsed
 * as it completes, so the text is never held whole. Nothing is handed out
 * before {@linkcode CheckpointReader.finish} has seen the end marker and
 * the checksum.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import {
  describeDifference,
  firstDifference,
  type IdentityDifference,
  isIdentity,
} from "./_identity.ts";
import { type CheckpointHeader, FORMAT, isObjectLike, VERSION } from "./_format.ts";
import { Fnv1a4 } from "./_fnv1a.ts";

/** The longest object line accepted (UTF-16 code units); etcd refuses objects above 1.5 MiB. */
const MAX_LINE = 64 * 1024 * 1024;
/** The longest first line accepted: a header is small, so garbage without newlines fails fast. */
const MAX_HEADER = 64 * 1024;
const NEWLINE = "\n";
/** Bound once: a global looked up per line is slow in a node:vm context (edge-runtime). */
const parseJson = JSON.parse;

/** A fully read and checked checkpoint. */
export interface DecodedCheckpoint<T extends KubeObjectLike> {
  header: CheckpointHeader;
  items: T[];
  bytes: number;
}

/** The checkpoint decoder's state machine. */
export class CheckpointReader<T extends KubeObjectLike> {
  readonly #key: string;
  readonly #expected: CheckpointIdentity;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  #pending: string[] = [];
  #pendingLength = 0;
  #line = 0;
  #bytes = 0;
  readonly #hash = new Fnv1a4();
  /** Whether the checksum has covered every byte before the end marker. */
  #hashed = false;
  /** The checksum the end marker claims (checked in `finish`). */
  #claimed: string | undefined;
  #header: CheckpointHeader | undefined;
  #items: T[] = [];
  #mismatch: IdentityDifference | undefined;
  #done = false;
  #started = false;

  constructor(key: string, expected: CheckpointIdentity) {
    this.#key = key;
    this.#expected = expected;
  }

  #fail(reason: "corrupt" | "truncated", detail: string): never {
    throw new CheckpointError(reason, this.#key, detail);
  }

  /** Takes the next chunk; throws a {@linkcode CheckpointError} as soon as the data is known bad. */
  push(chunk: Uint8Array): void {
    let text: string;
    try {
      text = this.#decoder.decode(chunk, { stream: true });
    } catch {
      this.#fail("corrupt", `not valid UTF-8 (near byte ${this.#bytes})`);
    }
    if (!this.#started && text !== "") {
      this.#started = true;
      if (text.charCodeAt(0) !== 0x7b /* { */) {
        this.#fail("corrupt", "not a checkpoint (it does not start with a JSON object)");
      }
    }
    this.#bytes += chunk.byteLength;
    const linesBefore = this.#line;
    this.#text(text);
    this.#hashChunk(chunk, linesBefore);
  }

  /**
   * Adds the chunk's bytes to the checksum, up to the end marker's line
   * (line count + 2, which starts after newline number count + 1). Done on
   * bytes, after the chunk's lines were read: newline bytes and newline
   * characters are one to one in valid UTF-8, so the line count says
   * whether the end marker starts in this chunk.
   */
  #hashChunk(chunk: Uint8Array, linesBefore: number): void {
    if (this.#hashed) return;
    const header = this.#header;
    if (!header || this.#line < header.count + 1) return this.#hash.update(chunk);
    let position = 0;
    for (let need = header.count + 1 - linesBefore; need > 0; need--) {
      position = chunk.indexOf(10, position) + 1;
    }
    this.#hash.update(chunk.subarray(0, position));
    this.#hashed = true;
  }

  #text(text: string): void {
    let start = 0;
    let newline: number;
    while ((newline = text.indexOf(NEWLINE, start)) !== -1) {
      let line = text.slice(start, newline);
      start = newline + 1;
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = this.#pending.join("");
        this.#pending = [];
        this.#pendingLength = 0;
      }
      this.#lineDone(line);
    }
    if (start < text.length) {
      this.#pending.push(start === 0 ? text : text.slice(start));
      this.#pendingLength += text.length - start;
      const max = this.#header ? MAX_LINE : MAX_HEADER;
      if (this.#pendingLength > max) {
        this.#fail("corrupt", `line ${this.#line + 1} is longer than ${max} characters`);
      }
    }
  }

  #parse(line: string, what: string): unknown {
    try {
      return parseJson(line);
    } catch {
      // JSON.parse's own message quotes the text: never pass it on.
      this.#fail("corrupt", `${what} (line ${this.#line}) is not JSON`);
    }
  }

  #lineDone(line: string): void {
    this.#line++;
    const header = this.#header;
    if (this.#done) this.#fail("corrupt", `data follows the end marker (line ${this.#line})`);
    if (header && this.#line === header.count + 2) return this.#trailer(line, header);
    if (!header) return this.#headerLine(line);
    if (this.#mismatch) return; // a foreign checkpoint: only checked for damage, not parsed
    const item = this.#parse(line, `object ${this.#line - 1}`);
    if (!isObjectLike(item)) {
      this.#fail("corrupt", `object ${this.#line - 1} is not a Kubernetes object`);
    }
    this.#items.push(item as unknown as T);
  }

  #headerLine(line: string): void {
    const h = this.#parse(line, "the header") as Partial<CheckpointHeader> | null;
    if (h === null || typeof h !== "object" || Array.isArray(h) || h.format !== FORMAT) {
      this.#fail("corrupt", "not a checkpoint (no kube-reflector-checkpoint header)");
    }
    if (typeof h.version === "number" && Number.isInteger(h.version) && h.version > VERSION) {
      throw new CheckpointError(
        "newer-format",
        this.#key,
        `format version ${h.version}, newer than this library's (${VERSION}); upgrade to read it`,
      );
    }
    if (h.version !== VERSION) this.#fail("corrupt", "the header has no valid format version");
    if (
      typeof h.resourceVersion !== "string" || h.resourceVersion === "" ||
      typeof h.count !== "number" || !Number.isSafeInteger(h.count) || h.count < 0 ||
      typeof h.savedAt !== "string" || !isIdentity(h.identity)
    ) {
      this.#fail("corrupt", "the header is malformed");
    }
    this.#header = h as CheckpointHeader;
    this.#mismatch = firstDifference(h.identity, this.#expected);
  }

  #trailer(line: string, header: CheckpointHeader): void {
    const t = this.#parse(line, "the end marker") as Record<string, unknown> | null;
    if (t === null || typeof t !== "object" || t.end !== FORMAT || t.count !== header.count) {
      this.#fail("corrupt", `line ${this.#line} is not the end marker of ${header.count} objects`);
    }
    if (typeof t.checksum !== "string") this.#fail("corrupt", "the end marker has no checksum");
    this.#claimed = t.checksum;
    this.#done = true;
  }

  /** Ends the input; returns the checkpoint, or throws a {@linkcode CheckpointError}. */
  finish(): DecodedCheckpoint<T> {
    let rest: string;
    try {
      rest = this.#decoder.decode();
    } catch {
      this.#fail("truncated", `ends inside a UTF-8 character (${this.#bytes} bytes)`);
    }
    if (rest) this.#text(rest);
    const header = this.#header;
    if (!this.#done) {
      if (this.#bytes === 0) this.#fail("truncated", "empty");
      const got = header
        ? `${Math.max(0, Math.min(this.#line - 1, header.count))} of ${header.count} objects`
        : "no header";
      const mid = this.#pendingLength > 0 ? ", mid-line" : "";
      this.#fail("truncated", `ends before its end marker (${got}${mid}; ${this.#bytes} bytes)`);
    }
    if (this.#pendingLength > 0) this.#fail("corrupt", "data follows the end marker");
    if (!this.#hashed || this.#claimed !== this.#hash.digest()) {
      this.#fail("corrupt", "checksum mismatch");
    }
    if (this.#mismatch) {
      const cluster = this.#mismatch.field === "server" || this.#mismatch.field === "cluster";
      throw new CheckpointError(
        cluster ? "foreign-cluster" : "foreign-resource",
        this.#key,
        describeDifference(this.#mismatch),
      );
    }
    return { header: header!, items: this.#items, bytes: this.#bytes };
  }
}
