/**
 * Checkpoints of a reflector: where they live, and how often they are saved.
 *
 * @module
 */
import type { CheckpointStorage } from "../checkpoint/checkpoint_storage.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";

/**
 * The `checkpoint` option of a {@linkcode Reflector} (and an `Informer`):
 * its store is loaded from the checkpoint under `key` when it starts, and
 * saved there on request, every `saveIntervalMs`, and when it stops.
 *
 * On start, a checkpoint that matches (same server, resource, namespace,
 * selectors, metadata-only mode and, where both know it, cluster) is loaded
 * into the store, which counts as synced (`syncedFrom` is `"checkpoint"`),
 * and the reflector watches from the checkpoint's resourceVersion with no
 * list; the first event or bookmark confirms it (`syncedFrom` becomes
 * `"server"`). If the server no longer has that version (410), it relists
 * at once and reports it. A checkpoint that does not match, is corrupt or
 * truncated, or of a newer format is reported (phase `"checkpoint"`) and
 * ignored: never half-loaded. A missing one means a plain start.
 *
 * Every call into the storage (and into the lister-watcher's `identity()`)
 * is raced against the run's signal or the save's: a storage that never
 * answers delays neither the end of `run()` after its signal aborts nor,
 * beyond `stopSaveTimeoutMs`, the save on stop.
 */
export interface ReflectorCheckpointOptions {
  /** Where checkpoints are kept. Required. */
  storage: CheckpointStorage;
  /** The checkpoint's key in `storage`. Required. */
  key: string;
  /**
   * What the checkpoint must be for. Default: the lister-watcher's
   * `identity()` (which `resourceListerWatcher` provides, with the cluster's
   * `kube-system` UID where readable); required when it has none. Its
   * answer is kept once it holds the cluster's UID; until then (the read
   * failed: a 503 at start-up, no permission to get namespaces) it is asked
   * again at each load and save, so that a later checkpoint records the
   * cluster.
   */
  identity?: ResourceIdentity;
  /** Save every this many ms once synced; 0 never saves on a timer. Default: `0`. */
  saveIntervalMs?: number;
  /** Save when `run()` ends (after its signal aborts), if synced. Default: `true`. */
  saveOnStop?: boolean;
  /**
   * The longest a save on stop may take before it is abandoned (reported):
   * `run()` ends by then even when the storage never answers. Default: `30_000`.
   */
  stopSaveTimeoutMs?: number;
}

/** Where a synced store's state came from (see {@linkcode ReflectorCheckpointOptions}). */
export type SyncedFrom = "checkpoint" | "server";

/** The outcome of a save. */
export interface CheckpointSaved {
  /** The resourceVersion the saved objects are exact at. */
  resourceVersion: string;
  /** How many objects were saved. */
  count: number;
  /** The bytes written (0 when nothing was: no change since the last save). */
  bytes: number;
  /**
   * What was written (see `saveCheckpoint`): `"none"`, `"version"` (the
   * head only), `"log"` (the changes since the last save), `"base"` (a new
   * snapshot: the first save, after a relist, or compaction).
   */
  written: "none" | "version" | "log" | "base" | "pages";
}

/** {@linkcode ReflectorCheckpointOptions} with every default filled in. */
export type ResolvedCheckpointOptions = Required<Omit<ReflectorCheckpointOptions, "identity">> & {
  identity?: ResourceIdentity;
};

/** Validates the option (a `TypeError`/`RangeError` at construction) and fills in defaults. */
export function resolveCheckpointOptions(
  value: ReflectorCheckpointOptions | undefined,
): ResolvedCheckpointOptions | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object") {
    throw new TypeError("checkpoint must be an options object");
  }
  const {
    storage,
    key,
    identity,
    saveIntervalMs = 0,
    saveOnStop = true,
    stopSaveTimeoutMs = 30_000,
  } = value;
  if (
    !storage || typeof storage.get !== "function" || typeof storage.put !== "function" ||
    typeof storage.delete !== "function"
  ) {
    throw new TypeError("checkpoint.storage must have get, put and delete methods");
  }
  if (typeof key !== "string" || key === "") {
    throw new TypeError("checkpoint.key must be a non-empty string");
  }
  if (identity !== undefined && (identity === null || typeof identity !== "object")) {
    throw new TypeError("checkpoint.identity must be an object");
  }
  for (
    const [name, v] of [["saveIntervalMs", saveIntervalMs], [
      "stopSaveTimeoutMs",
      stopSaveTimeoutMs,
    ]] as const
  ) {
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) {
      throw new RangeError(
        `checkpoint.${name} must be a finite number of milliseconds >= 0, got ${v}`,
      );
    }
  }
  if (typeof saveOnStop !== "boolean") {
    throw new TypeError("checkpoint.saveOnStop must be a boolean");
  }
  return { storage, key, identity, saveIntervalMs, saveOnStop, stopSaveTimeoutMs };
}
