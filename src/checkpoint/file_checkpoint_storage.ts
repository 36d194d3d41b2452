import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { abortable, abortableForEach } from "../async/_abortable.ts";
import { FileChunks, fileError, type FileHandle, type Fs, nodeFs } from "./_file_io.ts";
import { setLockScope } from "./_key_lock.ts";
import { dirLockScope } from "./_dir_scope.ts";

const SUFFIX = ".checkpoint";
/** File names stay below common file-system limits (255 bytes), with room for a temporary suffix. */
const MAX_NAME = 200;

/**
 * The file name of a key: percent-encoded as `encodeURIComponent` does
 * (so no `/` or `\`), with `.` (so no `.`, `..` or hidden file) and
 * `!'()*~` (not allowed in some file systems) encoded too, plus
 * `.checkpoint`.
 */
function checkpointFileName(key: string): string {
  if (typeof key !== "string" || key === "") {
    throw new TypeError("fileCheckpointStorage: key must be a non-empty string");
  }
  let name: string;
  try {
    name = encodeURIComponent(key).replace(
      /[.!'()*~]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    );
  } catch {
    throw new TypeError("fileCheckpointStorage: key holds an unpaired surrogate");
  }
  if (name.length > MAX_NAME) {
    throw new RangeError(
      `fileCheckpointStorage: key too long (at most ${MAX_NAME} characters once encoded)`,
    );
  }
  return name + SUFFIX;
}

const code = (err: unknown) => (err as { code?: string } | null)?.code;

/**
 * A {@linkcode CheckpointStorage} in files (Node, Deno, Bun: through
 * `node:fs/promises`, loaded on first use). Each key is one file in `dir`
 * (created if missing), named after the key, percent-encoded so that no
 * key can reach outside `dir` (`/`, `\` and `.` are encoded) and ending in
 * `.checkpoint`. Keys differing only in case collide on
 * case-insensitive file systems.
 *
 * A `put` writes a temporary file in the same directory, flushes it to disk
 * (`fsync`), then renames it over the old file, which is atomic: readers
 * and a restarted process find the previous file or the new one, whole. A
 * `put` that fails (its data throws, the disk fills, an abort) removes its
 * temporary file and leaves the previous checkpoint as it was; a process
 * killed mid-write leaves a `*.checkpoint.tmp-*` file behind, which is
 * never read (delete such files at leisure). A `get` opens the file at once
 * and reads that file to the end, whatever is renamed over it meanwhile;
 * the file is closed at the end, when the reader leaves early (`return()`,
 * also before the first read), and when the read fails or is aborted.
 *
 * Saves (`saveCheckpoint`) through every storage on the same directory in
 * one process take turns, however the directory was named (relative or
 * absolute; symbolic links are not followed); saves from other processes
 * are not held back, and leave a whole checkpoint all the same.
 *
 * Every method rejects with `signal.reason` as soon as its signal aborts,
 * even while a file-system call hangs (a stalled network file system);
 * what that call leaves (an open file, a temporary file) is released once
 * it returns. A put aborted during its final rename may still have
 * replaced the file. Errors name their cause: Node's system errors as they
 * are (`ENOTDIR: not a directory, open '…'`), and on Deno a missing
 * permission as the flag to add (`--allow-read=DIR` to load,
 * `--allow-write=DIR` to save or delete; a save needs both).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, readdir, rm } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { loadCheckpoint, saveCheckpoint } from "../../checkpoint.ts";
 * import { fileCheckpointStorage } from "../../checkpoint_file.ts";
 *
 * const dir = await mkdtemp(join(tmpdir(), "ckpt-"));
 * const storage = fileCheckpointStorage(dir);
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * const items = [{ metadata: { name: "web-0", namespace: "default" } }];
 * await saveCheckpoint(storage, "pods/default", { identity, resourceVersion: "8", items });
 * // the checkpoint's head, and its snapshot in a file of its own
 * assert.ok((await readdir(dir)).includes("pods%2Fdefault.checkpoint"));
 * assert.deepEqual((await loadCheckpoint(storage, "pods/default", identity))?.items, items);
 * await rm(dir, { recursive: true });
 * ```
 */
export function fileCheckpointStorage(dir: string): CheckpointStorage {
  if (typeof dir !== "string" || dir === "") {
    throw new TypeError("fileCheckpointStorage: dir must be a non-empty path");
  }
  const base = dir.replace(/[/\\]+$/, "") || dir;
  const pathOf = (key: string) => `${base}/${checkpointFileName(key)}`;

  const storage: CheckpointStorage = {
    async get(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await abortable(nodeFs(), signal);
      let handle: FileHandle;
      try {
        // a handle opened after an abort is closed, never leaked
        handle = await abortable(fs.open(path, "r"), signal, { dispose: (h) => h.close() });
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (code(err) === "ENOENT") return undefined;
        throw fileError(err, "read", base);
      }
      return new FileChunks(handle, signal);
    },

    async put(key, data, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await abortable(nodeFs(), signal);
      const random = crypto.getRandomValues(new Uint32Array(2));
      const temp = `${path}.tmp-${random[0].toString(36)}${random[1].toString(36)}`;
      let handle: FileHandle;
      try {
        await abortable(fs.mkdir(base, { recursive: true }), signal);
        handle = await abortable(fs.open(temp, "wx", 0o600), signal, {
          dispose: (h) => h.close().finally(() => fs.unlink(temp)),
        });
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        throw fileError(err, "write", base);
      }
      // Each call is raced against the signal; the clean-up waits for the
      // last one to settle (never closing a handle under a pending write).
      let last: Promise<unknown> = Promise.resolve();
      const step = <T>(call: Promise<T>): Promise<T> => abortable(last = call, signal);
      let closed = false;
      try {
        await abortableForEach(data, signal, async (chunk) => {
          let offset = 0;
          while (offset < chunk.byteLength) {
            offset += (await step(handle.write(chunk.subarray(offset)))).bytesWritten;
          }
        });
        signal?.throwIfAborted();
        await step(handle.sync());
        closed = true;
        await step(handle.close());
        await step(fs.rename(temp, path));
      } catch (err) {
        const cleanUp = last.then(() => {}, () => {}).then(async () => {
          if (!closed) await handle.close().catch(() => {});
          await fs.unlink(temp).catch(() => {});
        });
        if (signal?.aborted) throw signal.reason; // the clean-up goes on, unawaited
        await cleanUp;
        throw fileError(err, "write", base);
      }
      await abortable(syncDir(fs, base), signal);
    },

    async delete(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await abortable(nodeFs(), signal);
      try {
        await abortable(fs.unlink(path), signal);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (code(err) !== "ENOENT") throw fileError(err, "write", base);
      }
    },
  };
  // saves through every storage on this directory in this process take turns
  setLockScope(storage, dirLockScope(base));
  return storage;
}

/** Makes a rename durable (fsync of the directory), where the platform allows it (not on Windows). */
async function syncDir(fs: Fs, dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(dir, "r");
    await handle.sync();
  } catch {
    // not supported here: the rename is atomic all the same, only its durability waits for the OS
  } finally {
    await handle?.close().catch(() => {});
  }
}
