import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { CheckpointIdentity } from "./checkpoint_identity.ts";
import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { assertIdentity, firstDifference, savedIdentity } from "./_identity.ts";
import {
  type CheckpointHeader,
  encodeCheckpoint,
  type EncodeState,
  FORMAT,
  VERSION,
} from "./_format.ts";
import { storageFailure } from "./_storage_cause.ts";
import { abortable } from "../async/_abortable.ts";
import { encodeHead, type Head, HEAD_VERSION, pieceKey, piecesOf } from "./_head.ts";
import { readStored, release } from "./_head_io.ts";
import { encodeLogPiece, LOG_FORMAT, type NetChange } from "./_log_piece.ts";
import { planSave, type SavePlan, type StoredHead } from "./_save_plan.ts";
import { withKeyLock } from "./_key_lock.ts";
import { newGeneration } from "./_split_value.ts";
import {
  resolveSaveCheckpointOptions,
  type SaveCheckpointOptions,
} from "./save_checkpoint_options.ts";

/**
 * What a checkpoint holds: the objects of a store and the resourceVersion
 * they are exact at, and what they are for.
 */
export interface CheckpointData<T extends KubeObjectLike = KubeObject> {
  /** What the objects are for (server, resource, query, cluster). */
  identity: CheckpointIdentity;
  /**
   * The resourceVersion the objects are exact at: where a watch resumes.
   * Not empty, except with `progress` on a first list (no complete objects yet).
   */
  resourceVersion: string;
  /**
   * The objects. Taken as a snapshot when `saveCheckpoint` is called
   * (copied into an array of references before the first `await`), so a
   * live iterator of a store must not be left to change meanwhile. Written
   * only when a new snapshot is (see {@linkcode saveCheckpoint}).
   */
  items: Iterable<T>;
  /**
   * The net changes since the version `since`: the key (`namespace/name`)
   * of every object added, updated or deleted since then, each once, with
   * the object now or `undefined` when it is gone. When the stored
   * checkpoint is at a version from `since` to `resourceVersion`, only these
   * are written. Taken as a snapshot like `items`.
   */
  changes?: { since: string; objects: Iterable<readonly [key: string, object: T | undefined]> };
  /**
   * A list in progress (what `catchUp` saves when a list does not fit its
   * budget): the objects of the pages not saved yet, the continue token of
   * the next page, the list's version, and the continue token these pages
   * were listed from (`since`; undefined for the first page).
   */
  progress?: {
    items: Iterable<T>;
    continue: string;
    resourceVersion: string;
    since?: string;
    remaining?: number;
  };
  /** Whether a list completed since the last save (a list in progress stored is dropped). Default: false. */
  listed?: boolean;
  /**
   * Replace the stored checkpoint with a new snapshot even when it claims a
   * newer version (one ahead of the server, from an etcd restored from a
   * backup). Default: false.
   */
  replace?: boolean;
}

/** What {@linkcode saveCheckpoint} wrote. */
export interface SavedCheckpoint {
  /** The number of complete objects the checkpoint now holds at `resourceVersion`. */
  count: number;
  /** The bytes written: every piece and the head. */
  bytes: number;
  /**
   * What was written: `"none"` (nothing: no change, or a newer save was
   * stored), `"version"` (the head only: no change, the version advanced),
   * `"log"` (the changes and the head), `"base"` (a new snapshot, the log
   * compacted into it), `"pages"` (only a list in progress: its pages
   * saved, or dropped once moot; complete objects not to be trusted are
   * dropped with them while there are none to replace them).
   */
  written: "none" | "version" | "log" | "base" | "pages";
  /** The version the stored objects are exact at after the save. */
  resourceVersion: string;
}

/**
 * Saves a checkpoint under `key`: incrementally, all or nothing (as the
 * storage guarantees for each value). A checkpoint is a small head under
 * `key` that names a snapshot and a log of changes since it, each stored
 * under a fresh key (`key + "/base/…"`, `key + "/log/…"`); every piece is
 * written before the head that names it, and the pieces the head no longer
 * names are deleted after it, so a reader finds the previous checkpoint or
 * the new one, whole.
 *
 * With `changes` (net changes since a version), and a stored checkpoint
 * from that version on: no change writes nothing, or only the head (a few
 * hundred bytes) when it is older than `versionMarkerIntervalMs`, so that
 * the version stays inside the server's watch window; k changes write one
 * log piece of O(k) bytes and the head. A new snapshot is written when
 * there is none (or the stored value is of another identity, damaged, or
 * of format version 1), when the changes do not continue the stored
 * version, and when the log passes `maxLogEntries` pieces or
 * `maxLogRatio` times the snapshot's size (compaction). A stored
 * checkpoint newer than `resourceVersion` (another run saved later) is left
 * as it is. Saves to one key from one process run one after another, each
 * reading the head the previous one wrote; saves from two processes that
 * race both leave a whole checkpoint (the later head wins; a piece of the
 * other may stay behind, unnamed).
 *
 * The snapshot is produced as a stream of chunks of about 64 KiB, never as
 * one string, and the event loop gets a turn about every MiB. The identity
 * is saved with a normalized `server` (no credentials). See
 * docs/checkpoints.md for the format.
 *
 * Rejects with a `TypeError` for an invalid key, identity, resourceVersion,
 * item or change (an object without a `metadata` object, or one
 * `JSON.stringify` refuses); a {@linkcode CheckpointError} (`"storage"`,
 * the storage's error as `cause` and, without secrets, in the message) when
 * the storage fails; `signal.reason` as soon as `signal` aborts, even when
 * the storage's `put` never answers. In every such case the previous
 * checkpoint stays in place (as far as the storage keeps its contract).
 *
 * @example Save, then save only what changed
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadCheckpoint, memoryCheckpointStorage, saveCheckpoint } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = {
 *   server: "https://k8s.example.com",
 *   apiVersion: "v1",
 *   resource: "configmaps",
 *   namespace: "default",
 * };
 * const cm = (name: string, rv: string) => ({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name, namespace: "default", resourceVersion: rv },
 * });
 * const items = Array.from({ length: 20 }, (_, i) => cm(`cm-${i}`, "40"));
 * const first = await saveCheckpoint(storage, "configmaps", { identity, resourceVersion: "42", items });
 * assert.equal(first.written, "base"); // a snapshot of the 20
 * items[7] = cm("cm-7", "43");
 * const second = await saveCheckpoint(storage, "configmaps", {
 *   identity,
 *   resourceVersion: "43",
 *   items,
 *   changes: { since: "42", objects: [["default/cm-7", items[7]]] },
 * });
 * assert.equal(second.written, "log"); // the one change, and the head
 * assert.ok(second.bytes < first.bytes);
 * const loaded = await loadCheckpoint(storage, "configmaps", identity);
 * assert.equal(loaded?.resourceVersion, "43");
 * assert.deepEqual(loaded?.items, items);
 * ```
 */
export async function saveCheckpoint<T extends KubeObjectLike = KubeObject>(
  storage: CheckpointStorage,
  key: string,
  data: CheckpointData<T>,
  options: SaveCheckpointOptions = {},
): Promise<SavedCheckpoint> {
  const o = resolveSaveCheckpointOptions(options);
  const { signal } = o;
  signal?.throwIfAborted();
  if (typeof key !== "string" || key === "") {
    throw new TypeError("saveCheckpoint: key must be a non-empty string");
  }
  assertIdentity(data?.identity, "saveCheckpoint");
  const progress = data.progress;
  if (
    typeof data.resourceVersion !== "string" || (data.resourceVersion === "" && !progress)
  ) {
    throw new TypeError("saveCheckpoint: resourceVersion must be a non-empty string");
  }
  if (
    progress !== undefined &&
    (typeof progress.continue !== "string" || progress.continue === "" ||
      typeof progress.resourceVersion !== "string" || progress.resourceVersion === "")
  ) {
    throw new TypeError("saveCheckpoint: progress needs a continue token and a resourceVersion");
  }
  const snapshot: Snapshot<T> = {
    identity: savedIdentity(data.identity),
    resourceVersion: data.resourceVersion,
    items: Array.from(data.items),
    changes: data.changes &&
      { since: data.changes.since, objects: Array.from(data.changes.objects) },
    progress: progress && { ...progress, items: Array.from(progress.items) },
    listed: data.listed === true,
    replace: data.replace === true,
  };
  try {
    // raced against the signal: a storage that ignores it cannot hold the
    // caller (and the lock is let go when the storage call settles)
    return await abortable(
      withKeyLock(storage, key, () => saveLocked(storage, key, snapshot, o)),
      signal,
    );
  } catch (err) {
    if (!signal?.aborted && ownErrors.has(err as object)) throw err;
    throw storageFailure(err, key, signal, "save");
  }
}

/** What the caller handed over, copied before the first `await`. */
interface Snapshot<T extends KubeObjectLike> {
  identity: CheckpointIdentity;
  resourceVersion: string;
  items: T[];
  changes?: { since: string; objects: NetChange<T>[] };
  progress?: {
    items: T[];
    continue: string;
    resourceVersion: string;
    since?: string;
    remaining?: number;
  };
  listed: boolean;
  replace: boolean;
}

/** Errors of the data (a bad item or change), told apart from the storage's. */
const ownErrors = new WeakSet<object>();

/** Runs `fn`, marking what it throws as an error of the data. */
function own<R>(fn: () => R): R {
  try {
    return fn();
  } catch (err) {
    if (err !== null && typeof err === "object") ownErrors.add(err);
    throw err;
  }
}

type Resolved = ReturnType<typeof resolveSaveCheckpointOptions>;

/** Reads the head, decides, writes the pieces, the head, and deletes what is no longer named. */
async function saveLocked<T extends KubeObjectLike>(
  storage: CheckpointStorage,
  key: string,
  s: Snapshot<T>,
  o: Resolved,
): Promise<SavedCheckpoint> {
  const { signal } = o;
  signal?.throwIfAborted();
  const stored = await readHead(storage, key, s.identity, signal);
  const now = o.now();
  const logPiece = s.changes && stored.kind === "head" && stored.head.base
    ? own(() =>
      encodeLogPiece({
        format: LOG_FORMAT,
        version: 1,
        base: stored.head.base!.gen,
        from: stored.head.resourceVersion,
        to: s.resourceVersion,
        count: s.changes!.objects.length,
      }, s.changes!.objects)
    )
    : undefined;
  const plan: SavePlan = planSave(
    stored,
    {
      resourceVersion: s.resourceVersion,
      changes: s.changes &&
        {
          since: s.changes.since,
          count: s.changes.objects.length,
          bytes: logPiece?.byteLength ?? 0,
        },
      progress: s.progress &&
        { since: s.progress.since, resourceVersion: s.progress.resourceVersion },
      listed: s.listed,
      replace: s.replace,
    },
    o,
    now,
  );
  const old = stored.kind === "head" ? stored.head : undefined;
  if (plan.state === "keep" && plan.partial === "keep") {
    return {
      count: old?.count ?? 0,
      bytes: 0,
      written: "none",
      resourceVersion: old?.resourceVersion ?? "",
    };
  }
  const head: Head = old ? { ...old, log: [...old.log] } : {
    format: FORMAT,
    version: HEAD_VERSION,
    savedAt: "",
    resourceVersion: "",
    count: 0,
    identity: s.identity,
    log: [],
  };
  head.identity = s.identity;
  head.savedAt = new Date(now).toISOString();
  const obsolete: string[] = stored.kind === "other" ? [...stored.obsolete ?? []] : [];
  let bytes = 0;
  if (plan.state === "base") {
    const gen = newGeneration();
    const written = await putSnapshot(
      storage,
      pieceKey(key, "base", gen),
      {
        format: FORMAT,
        version: VERSION,
        savedAt: head.savedAt,
        resourceVersion: s.resourceVersion,
        count: s.items.length,
        identity: s.identity,
      },
      s.items,
      signal,
    );
    bytes += written;
    if (old?.base) obsolete.push(pieceKey(key, "base", old.base.gen));
    for (const e of old?.log ?? []) obsolete.push(pieceKey(key, "log", e.gen));
    head.base = { gen, resourceVersion: s.resourceVersion, count: s.items.length, bytes: written };
    head.log = [];
  } else if (plan.state === "log") {
    const gen = newGeneration();
    await abortable(storage.put(pieceKey(key, "log", gen), once(logPiece!), { signal }), signal);
    bytes += logPiece!.byteLength;
    head.log.push({
      gen,
      from: old!.resourceVersion,
      to: s.resourceVersion,
      count: s.changes!.objects.length,
      bytes: logPiece!.byteLength,
    });
  }
  if (plan.state === "drop") {
    // not to be trusted, nothing to replace them with yet: a head with only the list in progress
    if (old?.base) obsolete.push(pieceKey(key, "base", old.base.gen));
    for (const e of old?.log ?? []) obsolete.push(pieceKey(key, "log", e.gen));
    delete head.base;
    head.log = [];
    head.resourceVersion = "";
    head.count = 0;
  } else if (plan.state !== "keep") {
    head.resourceVersion = s.resourceVersion;
    head.count = s.items.length;
  }
  if (plan.partial === "append" || plan.partial === "restart") {
    const p = s.progress!;
    const gen = newGeneration();
    bytes += await putSnapshot(
      storage,
      pieceKey(key, "page", gen),
      {
        format: FORMAT,
        version: VERSION,
        savedAt: head.savedAt,
        resourceVersion: p.resourceVersion,
        count: p.items.length,
        identity: s.identity,
      },
      p.items,
      signal,
    );
    const before = plan.partial === "append" ? old!.partial! : undefined;
    if (plan.partial === "restart") {
      for (const g of old?.partial?.pages ?? []) obsolete.push(pieceKey(key, "page", g));
    }
    head.partial = {
      pages: [...(before?.pages ?? []), gen],
      continue: p.continue,
      resourceVersion: p.resourceVersion,
      count: (before?.count ?? 0) + p.items.length,
      ...(p.remaining === undefined ? {} : { remaining: p.remaining }),
    };
  } else if (plan.partial === "clear") {
    for (const g of old?.partial?.pages ?? []) obsolete.push(pieceKey(key, "page", g));
    delete head.partial;
  }
  if (!head.base && !head.partial) {
    // nothing complete and no pages: nothing worth a head
    return { count: 0, bytes, written: "none", resourceVersion: "" };
  }
  const encoded = encodeHead(head);
  // The switch-over: from here on, readers find the new checkpoint.
  if (plan.state !== "keep") o.cache?.delete(storage, key); // until the head is written
  await abortable(storage.put(key, once(encoded), { signal }), signal);
  bytes += encoded.byteLength;
  if (o.cache && head.base && plan.state !== "keep") {
    o.cache.set(storage, key, {
      baseGen: head.base.gen,
      logGens: head.log.map((e) => e.gen),
      resourceVersion: head.resourceVersion,
      items: s.items,
    });
  }
  for (const piece of obsolete) {
    if (signal?.aborted) break;
    // a piece left behind is only space: never a reason to fail a save that happened
    await abortable(storage.delete(piece, { signal }), signal).catch(() => {});
  }
  const written = plan.state === "keep" || plan.state === "drop" ? "pages" : plan.state;
  return { count: head.count, bytes, written, resourceVersion: head.resourceVersion };
}

/** The stored head, as a save sees it (anything unusable is overwritten). */
async function readHead(
  storage: CheckpointStorage,
  key: string,
  identity: CheckpointIdentity,
  signal: AbortSignal | undefined,
): Promise<StoredHead> {
  let stored;
  try {
    stored = await readStored(storage, key, signal);
  } catch (err) {
    if (signal?.aborted || !(err instanceof CheckpointError)) throw err;
    return { kind: "other" }; // a damaged value: replaced by a new snapshot
  }
  if (stored.kind === "stream") {
    release({ [Symbol.asyncIterator]: () => stored.rest });
    return { kind: "other" };
  }
  if (stored.kind === "none") return { kind: "other" };
  if (firstDifference(stored.head.identity, identity)) {
    // another identity's checkpoint: replaced, and its pieces deleted after
    return { kind: "other", obsolete: piecesOf(key, stored.head) };
  }
  const savedAtMs = Date.parse(stored.head.savedAt);
  return { kind: "head", head: stored.head, savedAtMs: Number.isFinite(savedAtMs) ? savedAtMs : 0 };
}

/** Writes a version 1 checkpoint as a piece; resolves its size. */
async function putSnapshot<T extends KubeObjectLike>(
  storage: CheckpointStorage,
  piece: string,
  header: CheckpointHeader,
  items: T[],
  signal: AbortSignal | undefined,
): Promise<number> {
  const state: EncodeState = { bytes: 0, finished: false };
  try {
    await abortable(
      storage.put(piece, encodeCheckpoint(header, items, state, signal), { signal }),
      signal,
    );
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (state.error !== undefined) {
      if (state.error !== null && typeof state.error === "object") ownErrors.add(state.error);
      throw state.error;
    }
    throw err;
  }
  if (!state.finished) {
    throw new CheckpointError("storage", piece, "the storage did not read the whole checkpoint");
  }
  return state.bytes;
}

/** One chunk, as a stream. */
async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array, void, undefined> {
  yield bytes;
}
