/**
 * Writes a response body either as it comes (each write goes to the socket
 * at once) or cut into chunks of a chosen byte size, each flushed and
 * followed by a turn of the event loop so that it crosses the socket on
 * its own.
 *
 * @module
 */
import type { ServerResponse } from "node:http";
import { setImmediate } from "node:timers";
import type { ChunkedFault } from "./fault.ts";

/** Writes body bytes in order; `write` resolves once the bytes are handed to the socket. */
export interface BodyWriter {
  write(data: string | Uint8Array): Promise<void>;
}

/** Writes each piece as one write, resolving once the socket took it. */
export function plainWriter(res: ServerResponse, signal: AbortSignal): BodyWriter {
  return {
    write(data) {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      return writeFlushed(res, bytes, signal);
    },
  };
}

/** Writes in chunks of `fault.chunkSize` bytes (or seeded random sizes); stops when `signal` aborts. */
export function chunkedWriter(
  res: ServerResponse,
  fault: ChunkedFault,
  signal: AbortSignal,
): BodyWriter {
  const nextSize = chunkSizes(fault);
  const encoder = new TextEncoder();
  return {
    async write(data) {
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      for (let offset = 0; offset < bytes.length && !signal.aborted;) {
        const end = Math.min(bytes.length, offset + nextSize());
        await writeFlushed(res, bytes.subarray(offset, end), signal);
        await nextTurn();
        offset = end;
      }
    },
  };
}

/** A function returning the next chunk size. */
function chunkSizes(fault: ChunkedFault): () => number {
  if (fault.chunkSize !== "random") {
    const size = fault.chunkSize;
    return () => size;
  }
  const max = Math.max(1, fault.maxChunkSize ?? 64);
  const random = mulberry32(fault.seed ?? 1);
  return () => 1 + Math.floor(random() * max);
}

/** Resolves when the socket took the bytes, or at once if the response is gone or `signal` aborted. */
function writeFlushed(res: ServerResponse, bytes: Uint8Array, signal: AbortSignal): Promise<void> {
  if (res.destroyed || res.writableEnded || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      res.off("close", done);
      resolve();
    };
    signal.addEventListener("abort", done);
    res.on("close", done);
    res.write(bytes, () => done());
  });
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A small seeded PRNG (mulberry32): the same seed gives the same chunk sizes. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
