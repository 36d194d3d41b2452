/**
 * Checkpoints: a reflector's objects and the resourceVersion they are exact
 * at, saved so that a restarted process (or a serverless script waking up)
 * resumes watching from there instead of listing everything again. This
 * entry point holds the format (`saveCheckpoint`, `loadCheckpoint`), the
 * identity a checkpoint is checked against (`identityMismatch`,
 * `clusterIdentity`), its errors (`CheckpointError`) and the storages that
 * run everywhere, edge runtimes included: in memory
 * (`memoryCheckpointStorage`) and over a Workers-KV-like binding
 * (`kvCheckpointStorage`, which splits big checkpoints across keys, all or
 * nothing). It imports no `node:*` module. Files are in
 * `kube-reflector/checkpoint/file`, Deno KV in
 * `kube-reflector/checkpoint/deno-kv`.
 *
 * A checkpoint is NDJSON: a header (format version, identity,
 * resourceVersion, count, time), one line per object, an end marker with a
 * checksum. Loading streams it line by line and hands out nothing unless it
 * is whole, intact, of a known format and for the expected server, cluster,
 * resource and query. See docs/checkpoints.md.
 *
 * @example Save a store's objects, load them back
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   CheckpointError,
 *   loadCheckpoint,
 *   memoryCheckpointStorage,
 *   saveCheckpoint,
 * } from "./checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = {
 *   server: "https://k8s.example.com",
 *   cluster: "0b3c5b7e-8f1e-4d0a-9a39-2c8b1f0e6d11", // clusterIdentity(client)
 *   apiVersion: "v1",
 *   resource: "configmaps",
 *   namespace: "default",
 * };
 * const items = [{ metadata: { name: "a", namespace: "default", resourceVersion: "41" } }];
 * await saveCheckpoint(storage, "configmaps", { identity, resourceVersion: "42", items });
 *
 * const loaded = await loadCheckpoint(storage, "configmaps", identity);
 * assert.equal(loaded?.resourceVersion, "42"); // watch from here
 * assert.deepEqual(loaded?.items, items);
 * // the same names in a rebuilt cluster: refused, never half-loaded
 * const rebuilt = { ...identity, cluster: "7d1e0c44-0000-4c1b-8d7e-5f0a1e2b3c4d" };
 * await assert.rejects(
 *   loadCheckpoint(storage, "configmaps", rebuilt),
 *   (err) => err instanceof CheckpointError && err.reason === "foreign-cluster",
 * );
 * ```
 *
 * @module
 */
export { type CheckpointStorage } from "./src/checkpoint/checkpoint_storage.ts";
export { type CheckpointIdentity, identityMismatch } from "./src/checkpoint/checkpoint_identity.ts";
export type { ResourceIdentity } from "./src/transport/resource_identity.ts";
export { clusterIdentity } from "./src/checkpoint/cluster_identity.ts";
export { CheckpointError, type CheckpointErrorReason } from "./src/checkpoint/checkpoint_error.ts";
export {
  type CheckpointData,
  saveCheckpoint,
  type SavedCheckpoint,
} from "./src/checkpoint/save_checkpoint.ts";
export { deleteCheckpoint } from "./src/checkpoint/delete_checkpoint.ts";
export {
  type CachedCheckpoint,
  CheckpointCache,
  checkpointCache,
} from "./src/checkpoint/checkpoint_cache.ts";
export {
  CHECKPOINT_DEFAULTS,
  type SaveCheckpointOptions,
} from "./src/checkpoint/save_checkpoint_options.ts";
export {
  type LoadCheckpointOptions,
  loadCheckpoint,
  type LoadedCheckpoint,
  type LoadedPartial,
} from "./src/checkpoint/load_checkpoint.ts";
export { memoryCheckpointStorage } from "./src/checkpoint/memory_checkpoint_storage.ts";
export {
  type KeyValueNamespaceLike,
  kvCheckpointStorage,
  type KvCheckpointStorageOptions,
} from "./src/checkpoint/kv_checkpoint_storage.ts";
