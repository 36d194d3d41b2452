/**
 * Why a checkpoint was refused or could not be read or written:
 * - `"corrupt"`: the bytes are damaged or are not a checkpoint at all (a
 *   checksum mismatch, a line that is not JSON, invalid UTF-8, a missing or
 *   mis-sized part of a split value, HTML in place of a checkpoint);
 * - `"truncated"`: the value ends before its end marker (a cut-off write,
 *   an empty value, a missing part of a split value);
 * - `"foreign-cluster"`: an intact checkpoint from another API server or
 *   cluster (`server` or `cluster` of its identity differ);
 * - `"foreign-resource"`: an intact checkpoint of another resource,
 *   namespace, selector or `metadataOnly` setting;
 * - `"newer-format"`: written by a newer version of this library (a format
 *   version this one does not know);
 * - `"ahead-of-server"`: an intact checkpoint at a resourceVersion newer than
 *   the server's current one (an etcd restored from a backup without a
 *   revision bump): nothing in it can be trusted, so everything is listed;
 * - `"storage"`: the storage itself failed (I/O error, permission); the
 *   storage's error is the `cause`, and the message says what it says
 *   without secrets (`ENOTDIR: not a directory, open '/var/ckpt/pods.checkpoint'`;
 *   on Deno, a missing permission as the flag to add, `--allow-write=DIR`).
 */
export type CheckpointErrorReason =
  | "corrupt"
  | "truncated"
  | "foreign-cluster"
  | "foreign-resource"
  | "newer-format"
  | "ahead-of-server"
  | "storage";

/**
 * A checkpoint that cannot be used, or a storage that failed. Loading never
 * hands out part of a refused checkpoint: the caller relists instead. The
 * message names the key and what is wrong (for a foreign checkpoint, the
 * field and both values); it never quotes the checkpoint's content or a
 * credential.
 *
 * @example Tell a damaged checkpoint from a foreign one
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
 * const identity = { server: "https://a.example.com", apiVersion: "v1", resource: "pods" };
 * await saveCheckpoint(storage, "pods", { identity, resourceVersion: "5", items: [] });
 * const elsewhere = { ...identity, server: "https://b.example.com" };
 * await assert.rejects(
 *   loadCheckpoint(storage, "pods", elsewhere),
 *   (err) => err instanceof CheckpointError && err.reason === "foreign-cluster" && err.key === "pods",
 * );
 * ```
 */
export class CheckpointError extends Error {
  /** What is wrong; see {@linkcode CheckpointErrorReason}. */
  readonly reason: CheckpointErrorReason;
  /** The storage key of the checkpoint. */
  readonly key: string;

  /** Creates the error; `detail` says what exactly is wrong (never content or credentials). */
  constructor(
    reason: CheckpointErrorReason,
    key: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`checkpoint ${JSON.stringify(key)}: ${detail} (${reason})`, options);
    this.name = "CheckpointError";
    this.reason = reason;
    this.key = key;
  }
}
