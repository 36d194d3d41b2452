import type { CheckpointStorage } from "./checkpoint_storage.ts";
import { abortableForEach } from "../async/_abortable.ts";

/**
 * A {@linkcode CheckpointStorage} in this process's memory: for tests, and
 * for keeping a checkpoint across runs of a reflector within one process.
 * A `put` replaces the value only once its data has been read whole, so a
 * failing or aborted `put` leaves the previous value; values are copied in
 * and out, so nobody can change them behind the storage's back.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadCheckpoint, memoryCheckpointStorage, saveCheckpoint } from "../../checkpoint.ts";
 *
 * const storage = memoryCheckpointStorage();
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "nodes" };
 * await saveCheckpoint(storage, "nodes", { identity, resourceVersion: "3", items: [] });
 * assert.equal((await loadCheckpoint(storage, "nodes", identity))?.items.length, 0);
 * await storage.delete("nodes");
 * assert.equal(await storage.get("nodes"), undefined);
 * ```
 */
export function memoryCheckpointStorage(): CheckpointStorage {
  const values = new Map<string, Uint8Array[]>();
  return {
    // deno-lint-ignore require-await
    async get(key, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const chunks = values.get(key);
      if (chunks === undefined) return undefined;
      return (async function* () {
        for (const chunk of chunks) {
          signal?.throwIfAborted();
          yield chunk.slice();
        }
      })();
    },
    async put(key, data, options = {}) {
      const { signal } = options;
      signal?.throwIfAborted();
      const chunks: Uint8Array[] = [];
      // an abort ends the put even while its data keeps it waiting
      await abortableForEach(data, signal, (chunk) => void chunks.push(chunk.slice()));
      signal?.throwIfAborted();
      values.set(key, chunks);
    },
    // deno-lint-ignore require-await
    async delete(key, options = {}) {
      options.signal?.throwIfAborted();
      values.delete(key);
    },
  };
}
