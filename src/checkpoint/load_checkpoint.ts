import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { CheckpointReader, type DecodedCheckpoint } from "./_checkpoint_reader.ts";
import { TurnTaker } from "./_yield.ts";
import { storageFailure } from "./_storage_cause.ts";
import { abortable, abortableForEach } from "../async/_abortable.ts";
import { readStored, readWhole, release } from "./_head_io.ts";
import { type Head, pieceKey } from "./_head.ts";
import { decodeLogPiece } from "./_log_piece.ts";
import { atOrAfter } from "./_save_plan.ts";
import { describeDifference, firstDifference } from "./_identity.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import type { CheckpointCache } from "./checkpoint_cache.ts";

/** A checkpoint read back whole, checked and matching the expected identity. */
export interface LoadedCheckpoint<T extends KubeObjectLike = KubeObject> {
  /** What it is for, as saved (its `server` normalized). */
  identity: CheckpointIdentity;
  /** The resourceVersion the objects are exact at: where a watch resumes. */
  resourceVersion: string;
  /** The objects, in the order they were saved. */
  items: T[];
  /** When it was saved (ISO 8601, the saving machine's clock). */
  savedAt: string;
  /** The bytes read: the head and every piece. */
  bytes: number;
  /** The values read: 1 for a version 1 checkpoint; the head, snapshot, log pieces and pages. */
  values: number;
  /**
   * A list in progress, saved by `catchUp` page by page (only with
   * `{ partial: true }`): the objects of the pages saved so far, at the
   * list's version, and the continue token of the next page. The complete
   * objects (`items`, at `resourceVersion`) are the last complete state;
   * none (`resourceVersion` `""`) while the first list is in progress.
   */
  partial?: LoadedPartial<T>;
}

/** A list in progress (see {@linkcode LoadedCheckpoint.partial}). */
export interface LoadedPartial<T extends KubeObjectLike = KubeObject> {
  /** The objects of the pages saved so far, in list order. */
  items: T[];
  /** The continue token of the next page. */
  continue: string;
  /** The version the list is consistent at. */
  resourceVersion: string;
  /** What the server said was left after the last saved page, when it said. */
  remaining?: number;
}

/** Options of {@linkcode loadCheckpoint}. */
export interface LoadCheckpointOptions {
  /** Aborts the load: it rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Decoded checkpoints kept between loads (see {@linkcode CheckpointCache}):
   * a load whose stored snapshot is the cached one reads only the head and
   * the new log pieces. Default: none.
   */
  cache?: CheckpointCache;
  /**
   * Also load a list in progress (`partial`), and a checkpoint that has
   * only that (no complete objects yet: `resourceVersion` `""`). Without
   * it such a checkpoint loads as none. Default: `false`.
   */
  partial?: boolean;
}

/**
 * Loads the checkpoint under `key`, if it is for `expected`. Resolves
 * `undefined` when there is none. Rejects with a {@linkcode CheckpointError}
 * when it is corrupt, truncated, of a newer format, for another cluster or
 * server (`"foreign-cluster"`), for another resource, namespace, selector or
 * `metadataOnly` setting (`"foreign-resource"`), or when the storage fails
 * (`"storage"`: the message says what the storage's error says, without
 * secrets; the error itself is the `cause`); with `signal.reason` as soon
 * as `signal` aborts, even when the storage (its `get` or a read of the
 * value) never answers: whatever it returns later is released. It never
 * hands out part of a checkpoint: the objects are returned only once the
 * end marker and the checksum have been read and checked. A damaged
 * checkpoint is reported as `"corrupt"` or `"truncated"` even when its
 * header is also foreign.
 *
 * The value is decoded as it streams in, line by line, so the text and the
 * objects are never both held whole; the event loop gets a turn about every
 * MiB. An incremental checkpoint (see {@linkcode saveCheckpoint}) is its
 * head, its snapshot and its log pieces, each checked the same way, the
 * pieces against what the head says of them (a piece missing is
 * `"truncated"`, one of another save `"corrupt"`); the objects are the
 * snapshot with every log piece applied in order.
 *
 * @example A checkpoint is used only for what it was saved for
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   CheckpointError,
 *   loadCheckpoint,
 *   memoryCheckpointStorage,
 *   saveCheckpoint,
 * } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * assert.equal(await loadCheckpoint(storage, "pods", identity), undefined); // none yet
 * await saveCheckpoint(storage, "pods", { identity, resourceVersion: "10", items: [] });
 * assert.equal((await loadCheckpoint(storage, "pods", identity))?.resourceVersion, "10");
 * await assert.rejects(
 *   loadCheckpoint(storage, "pods", { ...identity, labelSelector: "app=web" }),
 *   (err) => err instanceof CheckpointError && err.reason === "foreign-resource",
 * );
 * ```
 */
export async function loadCheckpoint<T extends KubeObjectLike = KubeObject>(
  storage: CheckpointStorage,
  key: string,
  expected: CheckpointIdentity,
  options: LoadCheckpointOptions = {},
): Promise<LoadedCheckpoint<T> | undefined> {
  const { signal, partial = false, cache } = options;
  signal?.throwIfAborted();
  if (typeof key !== "string" || key === "") {
    throw new TypeError("loadCheckpoint: key must be a non-empty string");
  }
  try {
    // Every call into the storage is raced against the signal (a storage
    // that ignores it cannot hold the caller), and what it returns is
    // released on every way out, a value it returns after an abort included.
    const stored = await readStored(storage, key, signal);
    if (stored.kind === "none") return undefined;
    if (stored.kind === "stream") {
      const { header, items, bytes } = await readVersion1<T>(
        key,
        expected,
        stored.read,
        stored.rest,
        signal,
      );
      return {
        identity: header.identity,
        resourceVersion: header.resourceVersion,
        items,
        savedAt: header.savedAt,
        bytes,
        values: 1,
      };
    }
    const options = { signal, partial, cache };
    try {
      return await loadIncremental<T>(storage, key, expected, stored.head, stored.bytes, options);
    } catch (err) {
      // A piece gone missing under a head read a moment ago: a save replaced
      // that head meanwhile (a compaction deletes what it no longer names).
      // Read the new head once; a head that has not changed is damage.
      if (!(err instanceof CheckpointError) || err.reason !== "truncated") throw err;
      const again = await readStored(storage, key, signal);
      if (again.kind === "stream") releaseIterator(again.rest);
      if (again.kind !== "head" || sameHead(again.head, stored.head)) throw err;
      return await loadIncremental<T>(storage, key, expected, again.head, again.bytes, options);
    }
  } catch (err) {
    throw storageFailure(err, key, signal, "read");
  }
}

/** Whether two heads name the same pieces. */
function sameHead(a: Head, b: Head): boolean {
  return a.savedAt === b.savedAt && a.base?.gen === b.base?.gen &&
    a.log.map((e) => e.gen).join() === b.log.map((e) => e.gen).join() &&
    a.partial?.pages.join() === b.partial?.pages.join();
}

/** Ends an iterator nobody will read on. */
function releaseIterator(it: AsyncIterator<Uint8Array>): void {
  release({ [Symbol.asyncIterator]: () => it });
}

/** Reads a version 1 checkpoint: the chunks read so far, then the rest. */
async function readVersion1<T extends KubeObjectLike>(
  key: string,
  expected: CheckpointIdentity,
  read: Uint8Array[],
  rest: AsyncIterator<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<DecodedCheckpoint<T>> {
  const reader = new CheckpointReader<T>(key, expected);
  const turns = new TurnTaker();
  for (const chunk of read) reader.push(chunk);
  await abortableForEach({ [Symbol.asyncIterator]: () => rest }, signal, (chunk) => {
    reader.push(chunk);
    return turns.add(chunk.byteLength);
  });
  signal?.throwIfAborted();
  return reader.finish();
}

/** Reads a version 1 checkpoint stored as a piece; a missing one is `"truncated"`. */
async function readPiece<T extends KubeObjectLike>(
  storage: CheckpointStorage,
  key: string,
  piece: string,
  what: string,
  expected: CheckpointIdentity,
  signal: AbortSignal | undefined,
): Promise<DecodedCheckpoint<T>> {
  const body = await abortable(storage.get(piece, { signal }), signal, { dispose: release });
  if (body === undefined) throw new CheckpointError("truncated", key, `its ${what} is missing`);
  return await readVersion1<T>(piece, expected, [], body[Symbol.asyncIterator](), signal);
}

/** Loads an incremental checkpoint: its snapshot, log and (if asked) list in progress. */
async function loadIncremental<T extends KubeObjectLike>(
  storage: CheckpointStorage,
  key: string,
  expected: CheckpointIdentity,
  head: Head,
  headBytes: number,
  options: { signal?: AbortSignal; partial: boolean; cache?: CheckpointCache },
): Promise<LoadedCheckpoint<T> | undefined> {
  const { signal } = options;
  const mismatch = firstDifference(head.identity, expected);
  if (mismatch) {
    const cluster = mismatch.field === "server" || mismatch.field === "cluster";
    throw new CheckpointError(
      cluster ? "foreign-cluster" : "foreign-resource",
      key,
      describeDifference(mismatch),
    );
  }
  if (!head.base && !options.partial) return undefined; // only a list in progress: nothing complete
  let bytes = headBytes;
  let values = 1;
  let items: T[] = [];
  const cached = head.base && options.cache?.get(storage, key);
  const reuse = cached && head.base && cached.baseGen === head.base.gen &&
    cached.logGens.length <= head.log.length &&
    cached.logGens.every((gen, i) => head.log[i].gen === gen);
  if (reuse) {
    // the snapshot and the log so far are the cached ones: read what is new
    const first = cached.logGens.length;
    items = cached.items as T[];
    if (first < head.log.length) {
      items = applyLog(key, items, await readLog<T>(storage, key, head, signal, first));
    }
    for (const e of head.log.slice(first)) bytes += e.bytes;
    values += head.log.length - first;
    if (items.length !== head.count) {
      throw new CheckpointError("corrupt", key, "its objects do not add up to its head's count");
    }
  } else if (head.base) {
    const base = await readPiece<T>(
      storage,
      key,
      pieceKey(key, "base", head.base.gen),
      "snapshot",
      expected,
      signal,
    );
    if (
      base.header.resourceVersion !== head.base.resourceVersion ||
      base.header.count !== head.base.count || base.bytes !== head.base.bytes
    ) {
      throw new CheckpointError("corrupt", key, "its snapshot is not the one its head names");
    }
    bytes += base.bytes;
    values++;
    items = base.items;
    if (head.log.length > 0) {
      items = applyLog(key, items, await readLog<T>(storage, key, head, signal));
    }
    for (const e of head.log) bytes += e.bytes;
    values += head.log.length;
    if (items.length !== head.count) {
      throw new CheckpointError("corrupt", key, "its objects do not add up to its head's count");
    }
  }
  if (head.base && options.cache) {
    options.cache.set(storage, key, {
      baseGen: head.base.gen,
      logGens: head.log.map((e) => e.gen),
      resourceVersion: head.resourceVersion,
      items,
    });
    items = items.slice(); // the caller's own array; the objects are shared
  }
  let loadedPartial: LoadedPartial<T> | undefined;
  if (head.partial && options.partial) {
    const p = head.partial;
    const pageItems: T[] = [];
    for (const gen of p.pages) {
      const page = await readPiece<T>(
        storage,
        key,
        pieceKey(key, "page", gen),
        "page of a list in progress",
        expected,
        signal,
      );
      if (page.header.resourceVersion !== p.resourceVersion) {
        throw new CheckpointError("corrupt", key, "a saved page is of another list");
      }
      for (const item of page.items) pageItems.push(item);
      bytes += page.bytes;
      values++;
    }
    if (pageItems.length !== p.count) {
      throw new CheckpointError(
        "corrupt",
        key,
        "its saved pages do not add up to its head's count",
      );
    }
    loadedPartial = {
      items: pageItems,
      continue: p.continue,
      resourceVersion: p.resourceVersion,
      ...(p.remaining === undefined ? {} : { remaining: p.remaining }),
    };
  }
  return {
    identity: head.identity,
    resourceVersion: head.resourceVersion,
    items,
    savedAt: head.savedAt,
    bytes,
    values,
    ...(loadedPartial ? { partial: loadedPartial } : {}),
  };
}

/** Reads the log pieces (requested together, checked in order), each against its entry in the head. */
async function readLog<T extends KubeObjectLike>(
  storage: CheckpointStorage,
  key: string,
  head: Head,
  signal: AbortSignal | undefined,
  first = 0,
): Promise<(readonly [string, T | undefined])[][]> {
  const entries = head.log.slice(first);
  const reads = entries.map((e) =>
    readWhole(storage, pieceKey(key, "log", e.gen), signal, e.bytes)
  );
  // every read is settled even when one fails: none is left unobserved
  const settled = await Promise.allSettled(reads);
  const pieces: (readonly [string, T | undefined])[][] = [];
  let at = first > 0 ? head.log[first - 1].to : head.base!.resourceVersion;
  for (let i = first; i < head.log.length; i++) {
    const e = head.log[i];
    const r = settled[i - first];
    if (r.status === "rejected") throw r.reason;
    if (r.value === undefined) {
      throw new CheckpointError(
        "truncated",
        key,
        `log piece ${i + 1} of ${head.log.length} is missing`,
      );
    }
    if (r.value.byteLength !== e.bytes) {
      throw new CheckpointError("corrupt", key, `log piece ${i + 1} is not the size its head says`);
    }
    // A piece may start after the one before ended: a save with no change
    // moved the head's version on in between (nothing changed meanwhile).
    // It never ends before it, nor before its own start.
    if (!atOrAfter(e.to, at) || !atOrAfter(e.to, e.from)) {
      throw new CheckpointError(
        "corrupt",
        key,
        `log piece ${i + 1} does not continue the one before`,
      );
    }
    pieces.push(
      decodeLogPiece<T>(pieceKey(key, "log", e.gen), r.value, {
        base: head.base!.gen,
        from: e.from,
        to: e.to,
        count: e.count,
      }),
    );
    at = e.to;
  }
  if (!atOrAfter(head.resourceVersion, at)) {
    throw new CheckpointError("corrupt", key, "its head's version is older than its log");
  }
  return pieces;
}

/** The snapshot's objects with the net changes applied in order (new keys at the end). */
function applyLog<T extends KubeObjectLike>(
  key: string,
  items: T[],
  pieces: (readonly [string, T | undefined])[][],
): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) {
    let k: string;
    try {
      k = metaNamespaceKeyFunc(item);
    } catch {
      throw new CheckpointError("corrupt", key, "an object of its snapshot has no name");
    }
    byKey.set(k, item);
  }
  for (const piece of pieces) {
    for (const [k, o] of piece) {
      if (o === undefined) byKey.delete(k);
      else byKey.set(k, o);
    }
  }
  return [...byKey.values()];
}
