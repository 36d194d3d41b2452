/**
 * Helpers of the checkpoint tests: sample objects and identities, a
 * storage serving given bytes in chunks of a given size, and the raw bytes
 * of a saved snapshot (a version 1 checkpoint).
 *
 * @module
 */
import type { KubeObject } from "../../src/api/types.ts";
import type { CheckpointIdentity } from "../../src/checkpoint/checkpoint_identity.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";

export const IDENTITY: CheckpointIdentity = {
  server: "https://k8s.example.com:6443",
  cluster: "2f9a3c1e-7b64-4d2a-9c1f-0e5d8b7a6c43",
  apiVersion: "v1",
  resource: "configmaps",
  namespace: "default",
  labelSelector: "app=web",
};

/** A ConfigMap of about `size` bytes of data, with characters of 1 to 4 UTF-8 bytes. */
export function configMap(i: number, size = 200): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `cm-${i}`,
      namespace: "default",
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
      resourceVersion: String(1000 + i),
      labels: { app: "web", "example.com/tier": i % 2 ? "front" : "back" },
    },
    data: {
      text: 'héllo ✓ 日本 😀 \n"quoted" \u2028'.repeat(Math.max(1, Math.floor(size / 40))),
      index: String(i),
    },
  };
}

export function configMaps(count: number, size = 200): KubeObject[] {
  return Array.from({ length: count }, (_, i) => configMap(i, size));
}

/** Concatenates chunks. */
export function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/** Reads a whole async iterable of chunks. */
export async function readAll(data: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const c of data) chunks.push(c.slice());
  return concat(chunks);
}

/**
 * The bytes of a version 1 checkpoint of `items`: the snapshot piece
 * saveCheckpoint writes (under `key + "/base/" + gen`, named by the head at
 * the key), which is also what an old checkpoint stored at the key itself
 * looks like (and is still loaded from there).
 */
export async function checkpointBytes(
  items: KubeObject[],
  identity: CheckpointIdentity = IDENTITY,
  resourceVersion = "4242",
): Promise<Uint8Array> {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity, resourceVersion, items });
  const head = dec.decode(await readAll((await storage.get("k"))!));
  const { base } = JSON.parse(head.slice(0, head.indexOf("\n")));
  return readAll((await storage.get(`k/base/${base.gen}`))!);
}

/** A read-only storage serving `bytes` under every key, in chunks of `chunkSize` bytes. */
export function bytesStorage(bytes: Uint8Array, chunkSize = 65536): CheckpointStorage & {
  reads: number;
} {
  const storage = {
    reads: 0,
    get() {
      storage.reads++;
      return Promise.resolve((async function* () {
        for (let i = 0; i < bytes.byteLength; i += chunkSize) {
          yield bytes.slice(i, i + chunkSize);
        }
      })());
    },
    put(): Promise<void> {
      return Promise.reject(new Error("read-only"));
    },
    delete(): Promise<void> {
      return Promise.reject(new Error("read-only"));
    },
  };
  return storage;
}

/** An async iterable of `chunks`, throwing `error` after them when given. */
export async function* chunksThen(
  chunks: Uint8Array[],
  error?: Error,
): AsyncGenerator<Uint8Array, void, undefined> {
  for (const c of chunks) {
    await Promise.resolve();
    yield c;
  }
  if (error) throw error;
}

export const enc = new TextEncoder();
export const dec = new TextDecoder();

/** A promise that never settles (a storage that ignores its signal). */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** Lets timers and I/O that are due run (one macrotask turn). */
export function turn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * A value as an iterator that yields `chunks`, then never answers again
 * (whatever its signal); records its `next()` and `return()` calls.
 */
export function stallingValue(chunks: Uint8Array[] = []): AsyncIterableIterator<Uint8Array> & {
  log: string[];
} {
  let i = 0;
  const value = {
    log: [] as string[],
    [Symbol.asyncIterator]() {
      return value;
    },
    next(): Promise<IteratorResult<Uint8Array, undefined>> {
      value.log.push("next");
      return i < chunks.length ? Promise.resolve({ done: false, value: chunks[i++] }) : never();
    },
    return(): Promise<IteratorResult<Uint8Array, undefined>> {
      value.log.push("return");
      return Promise.resolve({ done: true, value: undefined });
    },
  };
  return value;
}

/** Waits, turn by turn (at most `turns`), until `condition()` holds; fails if it never does. */
export async function until(condition: () => boolean, what: string, turns = 500): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (condition()) return;
    await turn();
  }
  throw new Error(`never happened: ${what}`);
}
