/**
 * Internals of `fileCheckpointStorage`: the parts of `node:fs/promises` it
 * uses, a file read as chunks that always closes, and the errors of
 * Deno's permission flags turned into a sentence naming the flag.
 *
 * @module
 */
import { abortable } from "../async/_abortable.ts";

/** The parts of a `node:fs/promises` file handle used here (typed here: no `@types/node`). */
export interface FileHandle {
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

/** The parts of `node:fs/promises` used here. */
export interface Fs {
  open(path: string, flags: string, mode?: number): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  mkdir(path: string, options: { recursive: true }): Promise<unknown>;
}

let fsPromise: Promise<Fs> | undefined;

/** `node:fs/promises`, loaded on first use; a `TypeError` where the runtime has none. */
export function nodeFs(): Promise<Fs> {
  fsPromise ??= (import("node:fs/promises") as Promise<unknown> as Promise<Fs>).catch((err) => {
    fsPromise = undefined;
    throw new TypeError("fileCheckpointStorage: this runtime has no node:fs/promises", {
      cause: err,
    });
  });
  return fsPromise;
}

const READ_CHUNK = 256 * 1024;

/**
 * An open file read as chunks of 256 KiB. Each read is raced against
 * `signal`; the file is closed at its end, on an error, and on `return()`,
 * even one called before the first read or while a read is under way
 * (the close then waits for that read: a handle is never closed under a
 * pending operation).
 */
export class FileChunks implements AsyncIterableIterator<Uint8Array> {
  readonly #handle: FileHandle;
  readonly #signal: AbortSignal | undefined;
  /** The last operation on the handle, settled or not. */
  #last: Promise<unknown> = Promise.resolve();
  #closing: Promise<void> | undefined;

  constructor(handle: FileHandle, signal: AbortSignal | undefined) {
    this.#handle = handle;
    this.#signal = signal;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Closes the handle once, after the last operation has settled. */
  #close(): Promise<void> {
    this.#closing ??= this.#last.then(() => this.#handle.close(), () => this.#handle.close());
    return this.#closing;
  }

  async next(): Promise<IteratorResult<Uint8Array, undefined>> {
    if (this.#closing) return { done: true, value: undefined };
    try {
      this.#signal?.throwIfAborted();
      const buffer = new Uint8Array(READ_CHUNK);
      const reading = this.#handle.read(buffer, 0, READ_CHUNK, null);
      this.#last = reading;
      const { bytesRead } = await abortable(reading, this.#signal);
      if (bytesRead === 0) {
        await abortable(this.#close(), this.#signal);
        return { done: true, value: undefined };
      }
      return {
        done: false,
        value: bytesRead === READ_CHUNK ? buffer : buffer.subarray(0, bytesRead),
      };
    } catch (err) {
      this.#close().catch(() => {});
      throw err;
    }
  }

  async return(): Promise<IteratorResult<Uint8Array, undefined>> {
    await abortable(this.#close(), this.#signal);
    return { done: true, value: undefined };
  }
}

/**
 * Which Deno permission flag `err` says is missing (`"read"` or `"write"`),
 * or `undefined` when it is not such an error. Deno 2 throws `NotCapable`
 * (`Requires write access to "…", run again with the --allow-write flag`);
 * Deno 1 threw `PermissionDenied` with the same text. `op` decides when the
 * text does not say.
 */
export function missingDenoFlag(err: unknown, op: "read" | "write"): "read" | "write" | undefined {
  const name = (err as { name?: unknown } | null)?.name;
  const message = String((err as { message?: unknown } | null)?.message ?? "");
  const flagged = name === "NotCapable" ||
    (name === "PermissionDenied" &&
      /--allow-(read|write)|Requires (read|write) access/.test(message));
  if (!flagged) return undefined;
  const said = /Requires (read|write) access|--allow-(read|write)/.exec(message);
  return (said?.[1] ?? said?.[2] ?? op) as "read" | "write";
}

/**
 * `err` as thrown by a file-system call on `dir`: a missing Deno permission
 * becomes an `Error` naming the flag to add (`--allow-write=DIR`), with the
 * original as its `cause`; any other error is returned as it is (Node's
 * system errors already name the code, the call and the path).
 */
export function fileError(err: unknown, op: "read" | "write", dir: string): unknown {
  const flag = missingDenoFlag(err, op);
  if (flag === undefined) return err;
  return new Error(
    `Deno may not ${flag} ${JSON.stringify(dir)}: run it with --allow-${flag}=${dir}`,
    { cause: err },
  );
}
