/**
 * Continue tokens and the list snapshots they point into.
 *
 * A token is the real server's, byte for byte: unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":195,"start":"cm2\u0000"}` (`start` is the
 * last key served, relative to the listed namespace). The pages after the
 * first come from the snapshot taken for the first page, found by the
 * list's query and `rv`, so every page of one list shows one consistent
 * state. Snapshots expire after a TTL (checked when used: no timers) or
 * all at once on demand.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";

/** What a continue token carries. `rv: -1` marks an "inconsistent" token (continue from the current state). */
export interface ContinueToken {
  rv: number;
  /** The key of the last item served, followed by `\u0000`. */
  start: string;
}

/** One frozen list result: sorted keys and the matching objects. */
export interface Snapshot {
  rv: number;
  keys: string[];
  items: KubeObject[];
  created: number;
}

/** Encodes a token the way the API server does (unpadded base64url of JSON). */
export function encodeContinue(token: ContinueToken): string {
  const json = JSON.stringify({ v: "meta.k8s.io/v1", ...token });
  const bytes = new TextEncoder().encode(json);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes a token; undefined when it is not one of ours or the server's. */
export function decodeContinue(text: string): ContinueToken | undefined {
  try {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
    if (parsed?.v !== "meta.k8s.io/v1") return undefined;
    if (!Number.isInteger(parsed.rv) || typeof parsed.start !== "string") return undefined;
    return { rv: parsed.rv, start: parsed.start };
  } catch {
    return undefined;
  }
}

/** The index of the first key after a token's `start` (keys are sorted). */
export function indexAfter(keys: string[], start: string): number {
  const last = start.endsWith("\u0000") ? start.slice(0, -1) : start;
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] <= last) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The live snapshots, by query and resourceVersion. */
export class ContinueSnapshots {
  #snapshots = new Map<string, Snapshot>();
  #ttlMs: number;

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  /** Keeps a snapshot under `key` (which should include its `rv`). Drops expired ones on the way. */
  add(key: string, snapshot: Omit<Snapshot, "created">): void {
    this.#prune();
    this.#snapshots.set(key, { ...snapshot, created: Date.now() });
  }

  /** The snapshot, or undefined when it expired or never existed. */
  get(key: string): Snapshot | undefined {
    this.#prune();
    return this.#snapshots.get(key);
  }

  /** Expires every snapshot, so every outstanding continue token answers 410. */
  expireAll(): void {
    this.#snapshots.clear();
  }

  #prune(): void {
    const now = Date.now();
    for (const [id, snapshot] of this.#snapshots) {
      if (now - snapshot.created >= this.#ttlMs) this.#snapshots.delete(id);
    }
  }
}
