/**
 * A checkpoint storage over a `Map` the test can see and change: it counts
 * what is read and written, serves values in chunks of a chosen size, and
 * can be made to fail a put at a chosen chunk or key. Two `MapStorage`s
 * over one `values` map are two processes over one store (no shared lock).
 * Also: reading a stored head and listing a checkpoint's pieces.
 *
 * @module
 */
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { concat, dec } from "./_helpers.ts";

/** One put that completed: its key and size. */
export interface PutRecord {
  key: string;
  bytes: number;
}

/** A storage over a `Map` of whole values, all or nothing per put. */
export class MapStorage implements CheckpointStorage {
  readonly values: Map<string, Uint8Array>;
  /** Every put that stored its value, in order. */
  readonly puts: PutRecord[] = [];
  /** Every key deleted (present or not), in order. */
  readonly deletes: string[] = [];
  /** Every key read, in order. */
  readonly gets: string[] = [];
  /** The size of the chunks `get` serves (default: the whole value in one chunk). */
  chunkSize: number | undefined;
  /** How `get` cuts a value into chunks, when set (before `chunkSize`). */
  split: ((value: Uint8Array) => Uint8Array[]) | undefined;
  /**
   * Called with each chunk a put reads (its index from 0) before it is
   * kept: throwing fails the put (the value stays as it was).
   */
  onChunk: ((key: string, index: number) => void) | undefined;
  /** Called once a put has read its whole value, before it stores it: throwing fails the put. */
  beforeStore: ((key: string) => void | Promise<void>) | undefined;

  constructor(values: Map<string, Uint8Array> = new Map()) {
    this.values = values;
  }

  /** The bytes of every put so far. */
  get bytesWritten(): number {
    return this.puts.reduce((n, p) => n + p.bytes, 0);
  }

  get(key: string, options: { signal?: AbortSignal } = {}) {
    options.signal?.throwIfAborted();
    this.gets.push(key);
    const value = this.values.get(key);
    if (value === undefined) return Promise.resolve(undefined);
    const size = this.chunkSize ?? Math.max(1, value.byteLength);
    const chunks = this.split?.(value.slice()) ?? [];
    if (!this.split) {
      for (let i = 0; i < value.byteLength; i += size) chunks.push(value.slice(i, i + size));
    }
    return Promise.resolve((async function* () {
      yield* chunks;
    })());
  }

  async put(key: string, data: AsyncIterable<Uint8Array>, options: { signal?: AbortSignal } = {}) {
    options.signal?.throwIfAborted();
    const chunks: Uint8Array[] = [];
    let index = 0;
    for await (const chunk of data) {
      this.onChunk?.(key, index++);
      chunks.push(chunk.slice());
      options.signal?.throwIfAborted();
    }
    await this.beforeStore?.(key);
    const value = concat(chunks);
    this.values.set(key, value);
    this.puts.push({ key, bytes: value.byteLength });
  }

  delete(key: string, options: { signal?: AbortSignal } = {}) {
    options.signal?.throwIfAborted();
    this.deletes.push(key);
    this.values.delete(key);
    return Promise.resolve();
  }

  /** Forgets what was counted so far. */
  resetCounts(): void {
    this.puts.length = 0;
    this.deletes.length = 0;
    this.gets.length = 0;
  }
}

/** The first line of the value under `key`, parsed (a head's, or a version 1 checkpoint's). */
export function storedHead(values: Map<string, Uint8Array>, key: string) {
  const value = values.get(key);
  if (value === undefined) throw new Error(`nothing under ${key}`);
  const text = dec.decode(value);
  return JSON.parse(text.slice(0, text.indexOf("\n"))) as {
    version: number;
    resourceVersion: string;
    count: number;
    base?: { gen: string; resourceVersion: string; count: number; bytes: number };
    log: { gen: string; from: string; to: string; count: number; bytes: number }[];
    partial?: { pages: string[]; continue: string; resourceVersion: string; count: number };
  };
}

/** The keys of the pieces stored for the checkpoint `key`, by kind, sorted. */
export function storedPieces(
  values: Map<string, Uint8Array>,
  key: string,
): { base: string[]; log: string[]; page: string[] } {
  const out = { base: [] as string[], log: [] as string[], page: [] as string[] };
  for (const k of values.keys()) {
    const m = k.slice(key.length).match(/^\/(base|log|page)\/([0-9a-f]{16})$/);
    if (k.startsWith(key) && m) out[m[1] as "base" | "log" | "page"].push(k);
  }
  for (const list of Object.values(out)) list.sort();
  return out;
}

/** The keys the head under `key` names, as stored keys (its snapshot, log pieces and pages). */
export function namedPieces(values: Map<string, Uint8Array>, key: string): string[] {
  const head = storedHead(values, key);
  return [
    ...(head.base ? [`${key}/base/${head.base.gen}`] : []),
    ...head.log.map((e) => `${key}/log/${e.gen}`),
    ...(head.partial?.pages ?? []).map((g) => `${key}/page/${g}`),
  ].sort();
}
