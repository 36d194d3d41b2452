/**
 * Checkpoints in files, for Node, Deno and Bun (through `node:fs/promises`,
 * loaded on first use): `fileCheckpointStorage(dir)` writes each checkpoint
 * to a temporary file, flushes it to disk and renames it into place, so a
 * crash never leaves a half-written checkpoint. Use it with
 * `saveCheckpoint` and `loadCheckpoint` from `kube-reflector/checkpoint`
 * (`checkpoint.ts`). See docs/checkpoints.md.
 *
 * @example A checkpoint that survives a restart
 * ```ts
 * import assert from "node:assert/strict";
 * import { mkdtemp, rm } from "node:fs/promises";
 * import { tmpdir } from "node:os";
 * import { join } from "node:path";
 * import { loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
 * import { fileCheckpointStorage } from "./checkpoint_file.ts";
 *
 * const dir = await mkdtemp(join(tmpdir(), "ckpt-"));
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "services" };
 * const items = [{ metadata: { name: "api", namespace: "default" } }];
 * await saveCheckpoint(fileCheckpointStorage(dir), "services", { identity, resourceVersion: "12", items });
 * // later, in another process:
 * const loaded = await loadCheckpoint(fileCheckpointStorage(dir), "services", identity);
 * assert.equal(loaded?.resourceVersion, "12");
 * await rm(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { fileCheckpointStorage } from "./src/checkpoint/file_checkpoint_storage.ts";
