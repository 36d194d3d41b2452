import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { CheckpointError } from "./checkpoint_error.ts";
import { abortable } from "../async/_abortable.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { setLockScope } from "./_key_lock.ts";
import { withWriteSlot } from "./_write_gate.ts";
import { kvKeys } from "./_kv_keys.ts";
import {
  isManifest,
  joinParts,
  type Manifest,
  manifestOf,
  manifestRejection,
  newGeneration,
  splitValue,
} from "./_split_value.ts";

/**
 * The part of a key-value binding that {@linkcode kvCheckpointStorage}
 * uses: the shape of Cloudflare Workers KV's `KVNamespace` (pass the
 * binding itself), and easy to provide over any other key-value store.
 */
export interface KeyValueNamespaceLike {
  /** The value under `key` as bytes, or `null` when there is none. */
  get(key: string, type: "arrayBuffer"): Promise<ArrayBuffer | null>;
  /** Stores `value` under `key`, replacing any previous value in one step. */
  put(key: string, value: ArrayBuffer | Uint8Array): Promise<void>;
  /** Removes the value under `key`, if any. */
  delete(key: string): Promise<void>;
}

/** Options of {@linkcode kvCheckpointStorage}. */
export interface KvCheckpointStorageOptions {
  /**
   * The largest value the store accepts, in bytes; a bigger checkpoint is
   * split across keys. At least 1024. Default: `25 * 1024 * 1024` (Workers
   * KV's limit).
   */
  maxValueBytes?: number;
  /** Put before every key this storage writes (e.g. `"checkpoints/"`). Default: `""`. */
  prefix?: string;
  /**
   * The least time between two writes of the same key from this isolate,
   * in ms: a `put` that comes sooner waits (as long as its signal allows).
   * Shared by every storage over the same binding object. Workers KV allows
   * one write per second to a key. `0` writes at once; at most an hour.
   * Default: `1000`.
   */
  minWriteIntervalMs?: number;
  /**
   * The longest key the store accepts, in UTF-8 bytes. A key whose longest
   * stored key (the prefix, the key, and the suffixes of a checkpoint's
   * pieces and of a split value's parts) would be longer is refused up
   * front with a `TypeError`. At least 64. Default: `512` (Workers KV's
   * limit).
   */
  maxKeyBytes?: number;
  /** The clock that spaces writes (a fake one in tests). Default: the system clock. */
  clock?: Clock;
}

/** Room kept in a value for the manifest's own line, next to an inline value. */
const MANIFEST_ROOM = 256;

function toBytes(value: unknown, what: string): Uint8Array {
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  }
  if (
    value !== null && typeof value === "object" &&
    typeof (value as ArrayBuffer).byteLength === "number"
  ) {
    return new Uint8Array(value as ArrayBuffer);
  }
  throw new TypeError(
    `kvCheckpointStorage: get(${what}, "arrayBuffer") did not resolve an ArrayBuffer`,
  );
}

/**
 * A {@linkcode CheckpointStorage} over a key-value store with a value-size
 * limit, such as Cloudflare Workers KV. A value that fits is stored under
 * `prefix + key` with its small manifest, in one write. A bigger one is
 * split: its parts are written first under fresh keys
 * (`prefix + key + "/parts/" + generation + "/" + index`), then the
 * manifest naming them (generation, part count, size, checksum) replaces
 * the previous one in a single write, and only then are the previous
 * generation's parts deleted. So a reader finds the old value or the new
 * one, whole: a writer that fails or crashes before the manifest leaves
 * the old one in place (its new parts are deleted when it can, left as
 * unreferenced keys when it crashed). A part that is missing or shorter
 * than the manifest says is reported as `"truncated"`, a size or checksum
 * mismatch as `"corrupt"`: never as data.
 *
 * On an eventually consistent store (Workers KV takes up to a minute to
 * propagate a write to other locations), a reader elsewhere may see the new
 * manifest before its parts, or the old manifest after its parts were
 * deleted: it then gets a `CheckpointError` and relists, never mixed data.
 * Workers KV allows one write per second to a key: writes of one key from
 * this isolate (through every storage over the same binding) go one at a
 * time, each at least `minWriteIntervalMs` after the one before (a put
 * that comes sooner waits, as long as its signal allows; a part's key is
 * fresh, only a manifest's is written again). Saves through storages over
 * one binding share `saveCheckpoint`'s lock: in one isolate, concurrent
 * saves of a checkpoint coalesce into one write of its head. Other isolates
 * are not held back: KV refuses their writes that come too soon (a storage
 * error; the checkpoint they found stays). A key whose longest stored key
 * would pass `maxKeyBytes` (Workers KV: 512 bytes) is refused up front
 * with a `TypeError`, before anything is read or written.
 *
 * Every call into `kv` is raced against the method's signal, so a binding
 * that never answers cannot outlast an abort (a save aborted after its
 * manifest was written may still have replaced the checkpoint).
 *
 * @example A checkpoint split across small values
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   deleteCheckpoint,
 *   kvCheckpointStorage,
 *   type KeyValueNamespaceLike,
 *   loadCheckpoint,
 *   saveCheckpoint,
 * } from "../../checkpoint.ts";
 *
 * // In a Worker, pass the binding: kvCheckpointStorage(env.CHECKPOINTS)
 * const map = new Map<string, Uint8Array>();
 * const kv: KeyValueNamespaceLike = {
 *   get: async (key) => map.has(key) ? map.get(key)!.slice().buffer : null,
 *   put: async (key, value) => void map.set(key, new Uint8Array(value).slice()),
 *   delete: async (key) => void map.delete(key),
 * };
 * const storage = kvCheckpointStorage(kv, { maxValueBytes: 1024, prefix: "ckpt/" });
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "configmaps" };
 * const items = Array.from({ length: 20 }, (_, i) => ({
 *   metadata: { name: `cm-${i}`, namespace: "default" },
 *   data: { value: "x".repeat(100) },
 * }));
 * await saveCheckpoint(storage, "cms", { identity, resourceVersion: "77", items });
 * // the head, and its snapshot as a manifest and parts of at most 1024 bytes
 * assert.ok(map.has("ckpt/cms") && map.size > 3);
 * assert.ok([...map.values()].every((value) => value.byteLength <= 1024));
 * assert.deepEqual((await loadCheckpoint(storage, "cms", identity))?.items, items);
 * // a key too long for Workers KV is refused before anything is written
 * await assert.rejects(storage.put("k".repeat(500), (async function* () {})()), TypeError);
 * await deleteCheckpoint(storage, "cms");
 * assert.equal(map.size, 0);
 * ```
 */
export function kvCheckpointStorage(
  kv: KeyValueNamespaceLike,
  options: KvCheckpointStorageOptions = {},
): CheckpointStorage {
  const {
    maxValueBytes = 25 * 1024 * 1024,
    prefix = "",
    minWriteIntervalMs = 1000,
    maxKeyBytes = 512,
    clock = systemClock,
  } = options ?? {};
  if (!Number.isSafeInteger(maxValueBytes) || maxValueBytes < 1024) {
    throw new RangeError("kvCheckpointStorage: maxValueBytes must be an integer of at least 1024");
  }
  if (typeof prefix !== "string") {
    throw new TypeError("kvCheckpointStorage: prefix must be a string");
  }
  if (
    typeof minWriteIntervalMs !== "number" || !Number.isFinite(minWriteIntervalMs) ||
    minWriteIntervalMs < 0 || minWriteIntervalMs > 3_600_000
  ) {
    throw new RangeError(
      `kvCheckpointStorage: minWriteIntervalMs must be a number of ms in [0, 3600000], got ${minWriteIntervalMs}`,
    );
  }
  if (!Number.isSafeInteger(maxKeyBytes) || maxKeyBytes < 64) {
    throw new RangeError(
      `kvCheckpointStorage: maxKeyBytes must be an integer of at least 64, got ${maxKeyBytes}`,
    );
  }
  if (
    clock === null || typeof clock !== "object" || typeof clock.now !== "function" ||
    typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function"
  ) {
    throw new TypeError(
      "kvCheckpointStorage: clock must be a Clock (now, setTimeout, clearTimeout)",
    );
  }
  if (kv === null || typeof kv !== "object" || typeof kv.get !== "function") {
    throw new TypeError("kvCheckpointStorage: kv must be a key-value binding (get, put, delete)");
  }
  const partBytes = maxValueBytes - MANIFEST_ROOM;
  const { manifestKey, partKey, checkKey } = kvKeys(prefix, maxKeyBytes);

  const readManifest = async (
    key: string,
    signal: AbortSignal | undefined,
  ): Promise<{ manifest: Manifest; inline: Uint8Array } | undefined> => {
    const value = await abortable(kv.get(manifestKey(key), "arrayBuffer"), signal);
    if (value === null || value === undefined) return undefined;
    const bytes = toBytes(value, "manifest");
    const newline = bytes.indexOf(10);
    let parsed: unknown;
    try {
      if (newline < 0) throw new Error("no newline");
      const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, newline));
      parsed = JSON.parse(text);
    } catch {
      throw new CheckpointError("corrupt", key, "the value is not a checkpoint manifest");
    }
    if (!isManifest(parsed)) throw manifestRejection(key, parsed, "the manifest is malformed");
    return { manifest: parsed, inline: bytes.subarray(newline + 1) };
  };

  /** Deletes parts; each call raced against `signal` (none for a clean-up after an abort). */
  const deleteParts = async (
    key: string,
    generation: string,
    parts: number,
    signal?: AbortSignal,
  ) => {
    for (let i = 0; i < parts; i++) {
      signal?.throwIfAborted();
      await abortable(kv.delete(partKey(key, generation, i)), signal);
    }
  };

  /**
   * Writes a value: its parts, then its manifest once `wait` allows.
   * Resolves the manifest it replaced (its parts are left to delete).
   */
  const putValue = async (
    key: string,
    data: AsyncIterable<Uint8Array>,
    signal: AbortSignal | undefined,
    wait: () => Promise<void>,
  ): Promise<Manifest | undefined> => {
    let previous: Manifest | undefined;
    try {
      previous = (await readManifest(key, signal))?.manifest;
    } catch (err) {
      if (!(err instanceof CheckpointError)) throw err; // an unreadable old value: nothing to clean
    }
    const generation = newGeneration();
    let written = 0;
    const dropNewParts = async (err: unknown): Promise<never> => {
      const cleanUp = deleteParts(key, generation, written).catch(() => {});
      if (!signal?.aborted) await cleanUp; // after an abort it goes on, unawaited
      throw err;
    };
    const split = await splitValue(data, partBytes, partBytes, async (part, index) => {
      written = index + 1;
      await abortable(kv.put(partKey(key, generation, index), part), signal);
    }, signal).catch(dropNewParts);
    const manifest = manifestOf(generation, split, partBytes);
    const line = new TextEncoder().encode(JSON.stringify(manifest) + "\n");
    const value = new Uint8Array(line.byteLength + (split.inline?.byteLength ?? 0));
    value.set(line);
    if (split.inline) value.set(split.inline, line.byteLength);
    await wait().catch(dropNewParts); // minWriteIntervalMs after the last write of this key
    // The switch-over. If this write fails, it may still have happened:
    // the new parts stay (unreferenced at worst), the old ones too.
    await abortable(kv.put(manifestKey(key), value), signal);
    return previous?.generation !== generation ? previous : undefined;
  };

  const storage: CheckpointStorage = {
    async get(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      const found = await readManifest(key, signal);
      if (found === undefined) return undefined;
      const { manifest, inline } = found;
      return joinParts(key, manifest, manifest.parts === 0 ? inline : undefined, async (i) => {
        const part = await abortable(
          kv.get(partKey(key, manifest.generation, i), "arrayBuffer"),
          signal,
        );
        return part === null || part === undefined ? undefined : toBytes(part, "part");
      }, signal);
    },

    async put(key, data, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      const slot = { intervalMs: minWriteIntervalMs, clock, signal };
      // one write of this key at a time, spaced: the old value is read in turn
      const previous = await withWriteSlot(
        kv,
        manifestKey(key),
        slot,
        (wait) => putValue(key, data, signal, wait),
      );
      if (previous && previous.parts > 0) {
        await deleteParts(key, previous.generation, previous.parts, signal).catch(() => {});
        signal?.throwIfAborted();
      }
    },

    async delete(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      checkKey(key);
      let previous: Manifest | undefined;
      try {
        previous = (await readManifest(key, signal))?.manifest;
      } catch (err) {
        if (!(err instanceof CheckpointError)) throw err;
      }
      // first: from here on, readers find nothing
      await abortable(kv.delete(manifestKey(key)), signal);
      if (previous && previous.parts > 0) {
        await deleteParts(key, previous.generation, previous.parts, signal);
      }
    },
  };
  // saves through every storage over this binding take turns (saveCheckpoint's lock)
  setLockScope(storage, kv);
  return storage;
}
