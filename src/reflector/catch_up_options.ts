import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import type { CheckpointStorage } from "../checkpoint/checkpoint_storage.ts";
import type { SavedCheckpoint } from "../checkpoint/save_checkpoint.ts";
import type { CheckpointCache } from "../checkpoint/checkpoint_cache.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";
import type { ErrorHandler } from "./watcher_options.ts";

/** Options of {@linkcode catchUp}. */
export interface CatchUpOptions {
  /** Where the checkpoint lives. Required. */
  storage: CheckpointStorage;
  /** The checkpoint's key. Required. */
  key: string;
  /**
   * Decoded checkpoints kept in memory between runs in one process (see
   * `checkpointCache()`): a run whose stored snapshot is the one cached
   * reads only the head and the changes since, not every object again.
   * Keep one at module scope in a Worker (it lives as long as the isolate).
   * Default: none.
   */
  cache?: CheckpointCache;
  /** What the checkpoint must be for. Default: the lister-watcher's `identity()`. */
  identity?: ResourceIdentity;
  /**
   * The wall-clock budget of catching up: when it runs out, catching up
   * stops where it is (`complete: false`), and what was applied is saved
   * (within `saveTimeoutMs` more). Every wait counts: requests, backoffs,
   * and the storage's calls. Default: `10_000` ms.
   */
  budgetMs?: number;
  /**
   * The longest the final save may take, in ms, after catching up ended;
   * a save that takes longer is abandoned and reported (`saveError`).
   * Default: `5_000`.
   */
  saveTimeoutMs?: number;
  /**
   * `timeoutSeconds` of each watch. kube-apiserver's watch cache sends a
   * bookmark with its current version 2 s before a watch's timeout (none at
   * all for a timeout under 3 s), which is what proves a resource caught up
   * when its last change is older than the target; a short timeout gets it
   * soon. Default: `3`.
   */
  watchTimeoutSeconds?: number;
  /**
   * The kind of the objects (`"ConfigMap"`): objects of another kind, and
   * a list of another kind, are reported and left out, as the reflector's
   * option of the same name does. Default: none (not checked).
   */
  expectedKind?: string;
  /** Receives the errors that were handled (a checkpoint ignored, a watch retried). Default: `console.warn`. */
  onError?: ErrorHandler;
  /** Aborts: `catchUp` rejects with `signal.reason` and saves nothing. */
  signal?: AbortSignal;
  /** Injectable time. Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for the backoff's jitter. Default: `Math.random`. */
  random?: () => number;
}

/**
 * Every default of {@linkcode CatchUpOptions}, in one frozen object (the
 * backoff, `Retry-After` cap and list deadline are the watcher's:
 * `WATCHER_DEFAULTS`).
 */
export const CATCH_UP_DEFAULTS: Readonly<{
  /** The budget of catching up, in ms. */
  budgetMs: number;
  /** The longest the final save may take, in ms. */
  saveTimeoutMs: number;
  /** `timeoutSeconds` of each watch. */
  watchTimeoutSeconds: number;
}> = Object.freeze({ budgetMs: 10_000, saveTimeoutMs: 5_000, watchTimeoutSeconds: 3 });

/** One change found by {@linkcode catchUp}, in the order the server made them. */
export type CatchUpChange<T extends KubeObjectLike = KubeObject> =
  | { type: "add"; key: string; object: T }
  | { type: "update"; key: string; oldObject: T; object: T }
  | { type: "delete"; key: string; object: T };

/**
 * Why {@linkcode catchUp} listed the objects:
 * - `"no-checkpoint"`: there was none;
 * - `"unusable-checkpoint"`: one of another identity, corrupt, truncated, or
 *   unreadable (reported);
 * - `"ahead-of-server"`: one at a version newer than the server's (an etcd
 *   restored from a backup without a revision bump; reported);
 * - `"expired"`: the checkpoint's version is gone from the server (410);
 * - `"watch-failed"`: the watch from it could not be trusted or was refused
 *   (a malformed event, an ERROR event, a 403): relisted, as the reflector does;
 * - `"no-proof"`: the server gave no proof that the watch had caught up (see
 *   {@linkcode catchUp}).
 */
export type CatchUpListReason =
  | "no-checkpoint"
  | "unusable-checkpoint"
  | "ahead-of-server"
  | "expired"
  | "watch-failed"
  | "no-proof";

/** What {@linkcode catchUp} found and saved. */
export interface CatchUpResult<T extends KubeObjectLike = KubeObject> {
  /**
   * The changes since the checkpoint: every add, update and delete the watch
   * delivered, in order; after a relist, the difference between the
   * checkpoint and the list (no intermediate states); without a checkpoint,
   * every object as an add.
   */
  changes: CatchUpChange<T>[];
  /** Every object now, by key (`namespace/name`). */
  objects: Map<string, T>;
  /** The resourceVersion `objects` are exact at (what was saved); `""` when nothing could be read. */
  resourceVersion: string;
  /** The version to reach: a consistent `limit=1` list's, read when `catchUp` started. */
  target: string;
  /**
   * True when every change up to `target` is in `objects`: an event or
   * bookmark at or past `target` was applied, or a consistent list was used.
   * False when the budget ran out first.
   */
  complete: boolean;
  /** Why the objects were listed, when they were. */
  listed?: CatchUpListReason;
  /**
   * What the save at the end wrote (see `saveCheckpoint`): `written` is
   * `"none"` when nothing changed (or a newer checkpoint was stored
   * meanwhile), `"log"` for the changes only, `"base"` for a new snapshot;
   * `bytes` is what was written. Undefined when there was nothing to save
   * or the save failed.
   */
  saved?: SavedCheckpoint;
  /**
   * A list that did not finish within the budget (a first run over many
   * objects): how many objects its pages brought so far (saved, to go on
   * from on the next run), and how many the server said were left. The
   * objects are then the last complete state (none on a first run), and
   * `complete` is false.
   */
  progress?: { items: number; remaining?: number };
  /** Why the save failed (also reported to `onError`): the next run starts from the previous checkpoint. */
  saveError?: unknown;
}

/** {@linkcode CatchUpOptions} validated, with every default filled in. */
export interface ResolvedCatchUpOptions {
  storage: CheckpointStorage;
  key: string;
  cache?: CheckpointCache;
  identity?: ResourceIdentity;
  budgetMs: number;
  saveTimeoutMs: number;
  watchTimeoutSeconds: number;
  expectedKind?: string;
  onError: ErrorHandler;
  signal?: AbortSignal;
  clock: Clock;
  random: () => number;
}

/**
 * Validates `catchUp`'s options and fills in defaults.
 *
 * @throws {TypeError} a missing storage or key, a handler that is not a function.
 * @throws {RangeError} a budget, save timeout or watch timeout out of range.
 */
export function resolveCatchUpOptions(options: CatchUpOptions): ResolvedCatchUpOptions {
  const o = options ?? ({} as CatchUpOptions);
  const D = CATCH_UP_DEFAULTS;
  const { storage, key } = o;
  if (
    !storage || typeof storage.get !== "function" || typeof storage.put !== "function"
  ) {
    throw new TypeError("catchUp: storage must be a CheckpointStorage");
  }
  if (typeof key !== "string" || key === "") {
    throw new TypeError("catchUp: key must be a non-empty string");
  }
  const ms = (name: string, value: number | undefined, fallback: number) => {
    const v = value ?? fallback;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 2_147_483_647) {
      throw new RangeError(`catchUp: ${name} must be a finite number of ms in (0, 2^31), got ${v}`);
    }
    return v;
  };
  const watchTimeoutSeconds = o.watchTimeoutSeconds ?? D.watchTimeoutSeconds;
  if (
    !Number.isInteger(watchTimeoutSeconds) || watchTimeoutSeconds < 3 || watchTimeoutSeconds > 3600
  ) {
    throw new RangeError(
      `catchUp: watchTimeoutSeconds must be an integer in [3, 3600], got ${watchTimeoutSeconds}`,
    );
  }
  if (o.onError !== undefined && typeof o.onError !== "function") {
    throw new TypeError("catchUp: onError must be a function");
  }
  if (o.random !== undefined && typeof o.random !== "function") {
    throw new TypeError("catchUp: random must be a function");
  }
  if (o.cache !== undefined && (o.cache === null || typeof o.cache.get !== "function")) {
    throw new TypeError("catchUp: cache must be a CheckpointCache (checkpointCache())");
  }
  return {
    storage,
    key,
    cache: o.cache,
    identity: o.identity,
    budgetMs: ms("budgetMs", o.budgetMs, D.budgetMs),
    saveTimeoutMs: ms("saveTimeoutMs", o.saveTimeoutMs, D.saveTimeoutMs),
    watchTimeoutSeconds,
    expectedKind: o.expectedKind,
    onError: o.onError ??
      ((err: unknown, phase: string) =>
        console.warn(
          `[catchUp ${key}] ${phase}: ${err instanceof Error ? err.message : String(err)}`,
        )),
    signal: o.signal,
    clock: o.clock ?? systemClock,
    random: o.random ?? Math.random,
  };
}
