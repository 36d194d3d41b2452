/**
 * Where checkpoints live: bytes by key, streamed in and out. The library
 * ships a memory storage (`memoryCheckpointStorage`), a generic key-value
 * adapter for edge stores (`kvCheckpointStorage`), files
 * (`fileCheckpointStorage`, entry point `checkpoint/file`) and Deno KV
 * (`denoKvCheckpointStorage`, entry point `checkpoint/deno-kv`); anything
 * else (S3, a database row) fits by implementing these three methods.
 *
 * Implementations must make `put` all-or-nothing: a reader sees the
 * previous value or the new one, never a mix or a torn value, even if the
 * writer crashes midway (write elsewhere, then switch over in one atomic
 * step). A `put` whose `data` throws must leave the previous value in
 * place and reject with that error. Every method rejects with
 * `signal.reason` once `signal` is aborted. The checkpoint format carries
 * its own checksum, so a storage that cannot guarantee atomicity is still
 * caught when it tears a value; it is then rejected, not half-loaded.
 *
 * @example A storage over a `Map` (what `memoryCheckpointStorage` does)
 * ```ts
 * import assert from "node:assert/strict";
 * import { type CheckpointStorage, loadCheckpoint, saveCheckpoint } from "../../checkpoint.ts";
 *
 * const values = new Map<string, Uint8Array[]>();
 * const storage: CheckpointStorage = {
 *   async get(key) {
 *     const chunks = values.get(key);
 *     return chunks && (async function* () { yield* chunks; })();
 *   },
 *   async put(key, data) {
 *     const chunks: Uint8Array[] = [];
 *     for await (const chunk of data) chunks.push(chunk.slice());
 *     values.set(key, chunks); // only once the whole value is in: all or nothing
 *   },
 *   async delete(key) {
 *     values.delete(key);
 *   },
 * };
 * const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "configmaps" };
 * const items = [{ metadata: { name: "a", namespace: "default", resourceVersion: "7" } }];
 * await saveCheckpoint(storage, "cm", { identity, resourceVersion: "9", items });
 * const loaded = await loadCheckpoint(storage, "cm", identity);
 * assert.equal(loaded?.resourceVersion, "9");
 * assert.deepEqual(loaded?.items, items);
 * ```
 */
export interface CheckpointStorage {
  /**
   * The value under `key` as a stream of byte chunks, or `undefined` when
   * there is none. The stream is a consistent snapshot of one value (the
   * previous or the new one if a `put` runs meanwhile); iterate it to the
   * end or leave the loop early, which releases what it holds.
   */
  get(
    key: string,
    options?: { signal?: AbortSignal },
  ): Promise<AsyncIterable<Uint8Array> | undefined>;
  /**
   * Replaces the value under `key` with the bytes of `data`, all or
   * nothing. The chunks may be reused by nobody but the storage once
   * handed over; the storage copies what it keeps if it must.
   */
  put(
    key: string,
    data: AsyncIterable<Uint8Array>,
    options?: { signal?: AbortSignal },
  ): Promise<void>;
  /** Removes the value under `key`; nothing happens when there is none. */
  delete(key: string, options?: { signal?: AbortSignal }): Promise<void>;
}
