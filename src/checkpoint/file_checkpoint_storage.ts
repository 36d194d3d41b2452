import type { CheckpointStorage } from "./checkpoint_storage.ts";

/** The parts of `node:fs/promises` used here (typed here: the declarations need no `@types/node`). */
interface FileHandle {
  write(data: Uint8Array): Promise<{ bytesWritten: number }>;
  read(
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number | null,
  ): Promise<{ bytesRead: number }>;
  sync(): Promise<void>;
  close(): Promise<void>;
}
interface Fs {
  open(path: string, flags: string, mode?: number): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
}
let fsPromise: Promise<Fs> | undefined;
function nodeFs(): Promise<Fs> {
  fsPromise ??= (import("node:fs/promises") as Promise<unknown> as Promise<Fs>).catch((err) => {
    fsPromise = undefined;
    throw new TypeError("fileCheckpointStorage: this runtime has no node:fs/promises", {
      cause: err,
    });
  });
  return fsPromise;
}

const READ_CHUNK = 256 * 1024;
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
 * and reads that file to the end, whatever is renamed over it meanwhile.
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
 * assert.deepEqual(await readdir(dir), ["pods%2Fdefault.checkpoint"]);
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

  return {
    async get(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await nodeFs();
      let handle: FileHandle;
      try {
        handle = await fs.open(path, "r");
      } catch (err) {
        if (code(err) === "ENOENT") return undefined;
        throw err;
      }
      return (async function* () {
        try {
          while (true) {
            signal?.throwIfAborted();
            const buffer = new Uint8Array(READ_CHUNK);
            const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, null);
            if (bytesRead === 0) return;
            yield bytesRead === READ_CHUNK ? buffer : buffer.subarray(0, bytesRead);
          }
        } finally {
          await handle.close();
        }
      })();
    },

    async put(key, data, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await nodeFs();
      await fs.mkdir(base, { recursive: true });
      const random = crypto.getRandomValues(new Uint32Array(2));
      const temp = `${path}.tmp-${random[0].toString(36)}${random[1].toString(36)}`;
      const handle = await fs.open(temp, "wx", 0o600);
      let closed = false;
      try {
        for await (const chunk of data) {
          signal?.throwIfAborted();
          let offset = 0;
          while (offset < chunk.byteLength) {
            const { bytesWritten } = await handle.write(chunk.subarray(offset));
            offset += bytesWritten;
          }
        }
        signal?.throwIfAborted();
        await handle.sync();
        closed = true;
        await handle.close();
        await fs.rename(temp, path);
      } catch (err) {
        if (!closed) await handle.close().catch(() => {});
        await fs.unlink(temp).catch(() => {});
        throw err;
      }
      await syncDir(fs, base);
    },

    async delete(key, options = {}) {
      options.signal?.throwIfAborted();
      const path = pathOf(key);
      const fs = await nodeFs();
      try {
        await fs.unlink(path);
      } catch (err) {
        if (code(err) !== "ENOENT") throw err;
      }
    },
  };
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
