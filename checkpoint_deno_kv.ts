/**
 * Checkpoints in Deno KV (`Deno.openKv()`: local, `:memory:`, or Deno
 * Deploy), for Deno only: `denoKvCheckpointStorage(kv)` splits a checkpoint
 * into parts below Deno KV's 64 KiB value limit and switches to a new one
 * with a single atomic commit, so readers never see half of one. Use it
 * with `saveCheckpoint` and `loadCheckpoint` from
 * `kube-reflector/checkpoint` (`checkpoint.ts`). Deno KV needs
 * `--unstable-kv` in Deno 2. See docs/checkpoints.md.
 *
 * @example
 * ```ts
 * /// <reference lib="deno.unstable" />
 * import assert from "node:assert/strict";
 * import { loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
 * import { denoKvCheckpointStorage } from "./checkpoint_deno_kv.ts";
 *
 * const kv = await Deno.openKv(":memory:"); // or a path; needs deno run --unstable-kv
 * const storage = denoKvCheckpointStorage(kv);
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
 * const previous = await loadCheckpoint(storage, "pods", identity); // undefined the first time
 * assert.equal(previous, undefined);
 * await saveCheckpoint(storage, "pods", { identity, resourceVersion: "9", items: [] });
 * assert.equal((await loadCheckpoint(storage, "pods", identity))?.resourceVersion, "9");
 * kv.close();
 * ```
 *
 * @module
 */
export {
  type DenoKvAtomicLike,
  denoKvCheckpointStorage,
  type DenoKvCheckpointStorageOptions,
  type DenoKvKeyLike,
  type DenoKvLike,
} from "./src/checkpoint/deno_kv_checkpoint_storage.ts";
