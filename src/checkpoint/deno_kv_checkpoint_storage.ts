import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { abortable } from "../async/_abortable.ts";
import { setLockScope } from "./_key_lock.ts";
import {
  isManifest,
  joinParts,
  type Manifest,
  manifestOf,
  manifestRejection,
  newGeneration,
  splitValue,
} from "./_split_value.ts";

/** A Deno KV key: its parts (strings and numbers are all this storage writes). */
export type DenoKvKeyLike = readonly (string | number | bigint | boolean | Uint8Array)[];

/** The part of a Deno KV atomic operation that {@linkcode denoKvCheckpointStorage} uses. */
export interface DenoKvAtomicLike {
  /** Makes the commit fail unless `key`'s versionstamp is still `versionstamp` (`null`: absent). */
  check(...checks: { key: DenoKvKeyLike; versionstamp: string | null }[]): DenoKvAtomicLike;
  /** Sets `key` to `value` on commit. */
  set(key: DenoKvKeyLike, value: unknown): DenoKvAtomicLike;
  /** Deletes `key` on commit. */
  delete(key: DenoKvKeyLike): DenoKvAtomicLike;
  /** Applies every mutation, or none when a check fails (`ok: false`). */
  commit(): Promise<{ ok: boolean }>;
}

/** The part of a `Deno.Kv` that {@linkcode denoKvCheckpointStorage} uses (pass the `Deno.Kv` itself). */
export interface DenoKvLike {
  /** The entry under `key`: its value and versionstamp, both `null` when absent. */
  get(key: DenoKvKeyLike): Promise<{ value: unknown; versionstamp: string | null }>;
  /** A new atomic operation. */
  atomic(): DenoKvAtomicLike;
}

/** Options of {@linkcode denoKvCheckpointStorage}. */
export interface DenoKvCheckpointStorageOptions {
  /** The key parts put before every key this storage writes. Default: `["kube-reflector-checkpoint"]`. */
  prefix?: readonly (string | number)[];
}

/** Deno KV refuses values above 64 KiB (serialized): parts stay well below. */
const PART_BYTES = 60 * 1024;
/** Parts per atomic operation: Deno KV limits the mutations and the total size of one. */
const PARTS_PER_COMMIT = 8;
const DELETES_PER_COMMIT = 10;

/** The manifest as stored: its fields, and the value itself when it fits. */
interface StoredManifest extends Manifest {
  inline?: Uint8Array;
}

/**
 * A {@linkcode CheckpointStorage} in Deno KV (`Deno.openKv()`: a local
 * SQLite file, `:memory:`, or Deno Deploy's KV), for Deno only. Deno KV
 * refuses values above 64 KiB, so a checkpoint is stored as parts of 60 KiB
 * under `[...prefix, key, generation, index]`, written in atomic batches,
 * then a manifest under `[...prefix, key]` (generation, part count, size,
 * checksum; the value itself when it fits) is set in one atomic commit
 * that checks no other save replaced it meanwhile, and only then are the
 * previous generation's parts deleted. A reader finds the old checkpoint or
 * the new one, whole; a save that fails or crashes before the manifest
 * leaves the old one in place. A missing or short part is reported as
 * `"truncated"`, a size or checksum mismatch as `"corrupt"`. A load that
 * races a save may find the old parts already deleted: it then fails
 * (`"truncated"`) rather than mix two checkpoints. Saves
 * (`saveCheckpoint`) through every storage over the same `Deno.Kv` in one
 * process take turns.
 *
 * Every call into `kv` is raced against the method's signal, so a store
 * that never answers cannot outlast an abort (a save aborted after its
 * manifest was committed may still have replaced the checkpoint).
 *
 * Deno KV is still unstable in Deno 2: run with `--unstable-kv`.
 *
 * @example
 * ```ts
 * /// <reference lib="deno.unstable" />
 * import assert from "node:assert/strict";
 * import { loadCheckpoint, saveCheckpoint } from "../../checkpoint.ts";
 * import { denoKvCheckpointStorage } from "../../checkpoint_deno_kv.ts";
 *
 * const kv = await Deno.openKv(":memory:");
 * const storage = denoKvCheckpointStorage(kv);
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "configmaps" };
 * const items = [{ metadata: { name: "a", namespace: "default" }, data: { big: "x".repeat(200_000) } }];
 * await saveCheckpoint(storage, "configmaps", { identity, resourceVersion: "5", items });
 * assert.deepEqual((await loadCheckpoint(storage, "configmaps", identity))?.items, items);
 * kv.close();
 * ```
 */
export function denoKvCheckpointStorage(
  kv: DenoKvLike,
  options: DenoKvCheckpointStorageOptions = {},
): CheckpointStorage {
  const { prefix = ["kube-reflector-checkpoint"] } = options;
  if (kv === null || typeof kv !== "object" || typeof kv.atomic !== "function") {
    throw new TypeError("denoKvCheckpointStorage: kv must be a Deno.Kv");
  }
  if (!Array.isArray(prefix)) {
    throw new TypeError("denoKvCheckpointStorage: prefix must be an array");
  }
  const manifestKey = (key: string): DenoKvKeyLike => [...prefix, key];
  const partKey = (key: string, generation: string, index: number): DenoKvKeyLike => [
    ...prefix,
    key,
    generation,
    index,
  ];
  const checkKey = (key: unknown) => {
    if (typeof key !== "string" || key === "") {
      throw new TypeError("denoKvCheckpointStorage: key must be a non-empty string");
    }
  };

  const readManifest = async (key: string, signal: AbortSignal | undefined) => {
    const entry = await abortable(kv.get(manifestKey(key)), signal);
    if (entry.versionstamp === null) return { manifest: undefined, versionstamp: null };
    const value = entry.value as StoredManifest | null;
    if (
      !isManifest(value) || (value.inline !== undefined && !(value.inline instanceof Uint8Array))
    ) {
      throw manifestRejection(key, value, "the value is not a checkpoint manifest");
    }
    return { manifest: value, versionstamp: entry.versionstamp };
  };

  /** Deletes parts; each commit raced against `signal` (none for a clean-up after an abort). */
  const deleteParts = async (
    key: string,
    generation: string,
    parts: number,
    signal?: AbortSignal,
  ) => {
    for (let i = 0; i < parts; i += DELETES_PER_COMMIT) {
      signal?.throwIfAborted();
      const op = kv.atomic();
      for (let j = i; j < Math.min(parts, i + DELETES_PER_COMMIT); j++) {
        op.delete(partKey(key, generation, j));
      }
      await abortable(op.commit(), signal);
    }
  };

  const storage: CheckpointStorage = {
    async get(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      const { manifest } = await readManifest(key, signal);
      if (manifest === undefined) return undefined;
      return joinParts(key, manifest, manifest.inline, async (i) => {
        const entry = await abortable(kv.get(partKey(key, manifest.generation, i)), signal);
        return entry.value instanceof Uint8Array ? entry.value : undefined;
      }, signal);
    },

    async put(key, data, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      const generation = newGeneration();
      let batch: DenoKvAtomicLike | undefined;
      let inBatch = 0;
      let written = 0;
      const flush = async () => {
        if (batch && inBatch > 0) await abortable(batch.commit(), signal);
        written += inBatch;
        batch = undefined;
        inBatch = 0;
      };
      let split;
      try {
        split = await splitValue(data, PART_BYTES, PART_BYTES, async (part, index) => {
          (batch ??= kv.atomic()).set(partKey(key, generation, index), part);
          if (++inBatch === PARTS_PER_COMMIT) await flush();
        }, signal);
        await flush();
        signal?.throwIfAborted();
      } catch (err) {
        const cleanUp = deleteParts(key, generation, written + inBatch).catch(() => {});
        if (!signal?.aborted) await cleanUp; // after an abort it goes on, unawaited
        throw err;
      }
      const manifest: StoredManifest = manifestOf(generation, split, PART_BYTES);
      if (split.inline) manifest.inline = split.inline;
      // The switch-over, checked against a concurrent save: whichever
      // manifest this one replaces, its parts are deleted afterwards.
      for (let attempt = 0;; attempt++) {
        let previous: { manifest: Manifest | undefined; versionstamp: string | null };
        try {
          previous = await readManifest(key, signal);
        } catch (err) {
          if (!(err instanceof CheckpointError)) throw err;
          previous = {
            manifest: undefined,
            versionstamp: (await abortable(kv.get(manifestKey(key)), signal)).versionstamp,
          };
        }
        const result = await abortable(
          kv.atomic()
            .check({ key: manifestKey(key), versionstamp: previous.versionstamp })
            .set(manifestKey(key), manifest)
            .commit(),
          signal,
        );
        if (result.ok) {
          const old = previous.manifest;
          if (old && old.parts > 0 && old.generation !== generation) {
            await deleteParts(key, old.generation, old.parts, signal).catch(() => {});
            signal?.throwIfAborted();
          }
          return;
        }
        if (attempt >= 10) {
          await deleteParts(key, generation, split.parts, signal).catch(() => {});
          throw new CheckpointError("storage", key, "other saves kept replacing it: gave up");
        }
      }
    },

    async delete(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      let previous: Manifest | undefined;
      try {
        previous = (await readManifest(key, signal)).manifest;
      } catch (err) {
        if (!(err instanceof CheckpointError)) throw err;
      }
      await abortable(kv.atomic().delete(manifestKey(key)).commit(), signal);
      if (previous && previous.parts > 0) {
        await deleteParts(key, previous.generation, previous.parts, signal);
      }
    },
  };
  // saves through every storage over this Deno.Kv take turns (saveCheckpoint's lock)
  setLockScope(storage, kv);
  return storage;
}
