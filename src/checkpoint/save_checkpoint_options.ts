/**
 * Options of `saveCheckpoint`, and their one source of defaults.
 *
 * @module
 */

import type { CheckpointCache } from "./checkpoint_cache.ts";

/** Options of {@linkcode saveCheckpoint}. */
export interface SaveCheckpointOptions {
  /**
   * Remember what was written in this cache (see {@linkcode CheckpointCache}),
   * so that the next load with it reads only the head. Default: none.
   */
  cache?: CheckpointCache;
  /** Aborts the save: it rejects with `signal.reason` (the previous checkpoint stays). */
  signal?: AbortSignal;
  /**
   * The most log pieces a checkpoint keeps before its log is compacted into
   * a new snapshot (each is a value to read on load). At least 1.
   * Default: `16`.
   */
  maxLogEntries?: number;
  /**
   * The log is compacted into a new snapshot once its bytes pass this
   * share of the snapshot's (so a load reads at most this much more than
   * the snapshot, and writes stay proportional to the changes: a snapshot
   * of N bytes is rewritten after about this times N bytes of changes).
   * Above 0. Default: `0.5`.
   */
  maxLogRatio?: number;
  /**
   * With no change, the head is rewritten (a few hundred bytes, the new
   * version) only when it is older than this, in ms; otherwise nothing is
   * written. A checkpoint whose version falls out of the API server's watch
   * cache costs a full list on the next run (a 410), and a quiet
   * selection's version does not move by itself while the rest of the
   * resource changes: kube-apiserver keeps at least 75 s of a resource's
   * events (measured on 1.20.2 and 1.37.2: 80 s at 20 writes/s elsewhere,
   * 128 s at 100 writes/s). A head rewritten once older than 45 s keeps
   * runs a minute apart inside that window. `0` rewrites it on every save
   * that moved the version. Default: `45_000`.
   */
  versionMarkerIntervalMs?: number;
  /** The current time in ms since the epoch (stamped in the head, and for the interval above). Default: `Date.now`. */
  now?: () => number;
}

/** Every default of {@linkcode SaveCheckpointOptions}, in one frozen object. */
export const CHECKPOINT_DEFAULTS: Readonly<{
  /** The most log pieces before compaction. */
  maxLogEntries: number;
  /** The log's bytes, as a share of the snapshot's, that cause compaction. */
  maxLogRatio: number;
  /** The age of the head, in ms, past which a save with no change rewrites it. */
  versionMarkerIntervalMs: number;
}> = Object.freeze({ maxLogEntries: 16, maxLogRatio: 0.5, versionMarkerIntervalMs: 45_000 });

/** {@linkcode SaveCheckpointOptions} validated, with every default filled in. */
export interface ResolvedSaveCheckpointOptions {
  signal?: AbortSignal;
  cache?: CheckpointCache;
  maxLogEntries: number;
  maxLogRatio: number;
  versionMarkerIntervalMs: number;
  now: () => number;
}

/**
 * Validates the options of `saveCheckpoint` and fills in defaults.
 *
 * @throws {RangeError} a limit out of range.
 * @throws {TypeError} `now` that is not a function.
 */
export function resolveSaveCheckpointOptions(
  options: SaveCheckpointOptions = {},
): ResolvedSaveCheckpointOptions {
  const o = options ?? {};
  const D = CHECKPOINT_DEFAULTS;
  const maxLogEntries = o.maxLogEntries ?? D.maxLogEntries;
  if (!Number.isSafeInteger(maxLogEntries) || maxLogEntries < 1 || maxLogEntries > 10_000) {
    throw new RangeError(
      `saveCheckpoint: maxLogEntries must be an integer in [1, 10000], got ${maxLogEntries}`,
    );
  }
  const maxLogRatio = o.maxLogRatio ?? D.maxLogRatio;
  if (typeof maxLogRatio !== "number" || !(maxLogRatio > 0) || !Number.isFinite(maxLogRatio)) {
    throw new RangeError(
      `saveCheckpoint: maxLogRatio must be a finite number above 0, got ${maxLogRatio}`,
    );
  }
  const interval = o.versionMarkerIntervalMs ?? D.versionMarkerIntervalMs;
  if (typeof interval !== "number" || !Number.isFinite(interval) || interval < 0) {
    throw new RangeError(
      `saveCheckpoint: versionMarkerIntervalMs must be a finite number >= 0, got ${interval}`,
    );
  }
  if (o.now !== undefined && typeof o.now !== "function") {
    throw new TypeError("saveCheckpoint: now must be a function");
  }
  if (o.cache !== undefined && (o.cache === null || typeof o.cache.set !== "function")) {
    throw new TypeError("saveCheckpoint: cache must be a CheckpointCache (checkpointCache())");
  }
  return {
    signal: o.signal,
    cache: o.cache,
    maxLogEntries,
    maxLogRatio,
    versionMarkerIntervalMs: interval,
    now: o.now ?? Date.now,
  };
}
