/**
 * Reads the raw HTTP responses recorded from a real kube-apiserver 1.20
 * (tests/fixtures/kube-apiserver-1.20/*.http).
 *
 * @module
 */
import { readFileSync } from "node:fs";

/** A recorded response: status, headers (lower-case names), body text. */
export interface Fixture {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Loads one fixture by file name. */
export function fixture(name: string): Fixture {
  const raw = readFileSync(
    new URL(`./fixtures/kube-apiserver-1.20/${name}`, import.meta.url),
    "utf8",
  );
  const split = raw.indexOf("\r\n\r\n") >= 0 ? raw.indexOf("\r\n\r\n") : raw.indexOf("\n\n");
  const sep = raw.startsWith("\r\n", split) ? 4 : 2;
  const head = raw.slice(0, split).split(/\r?\n/);
  const status = Number(head[0].split(" ")[1]);
  const headers = new Map<string, string>();
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { status, headers, body: raw.slice(split + sep) };
}

/** A body stream that delivers `bytes` in the given chunk sizes and records cancellation. */
export function chunkedBody(bytes: Uint8Array, sizes: number[] | number): {
  body: ReadableStream<Uint8Array>;
  cancelled: () => boolean;
} {
  let offset = 0;
  let i = 0;
  let wasCancelled = false;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      const size = typeof sizes === "number" ? sizes : sizes[Math.min(i++, sizes.length - 1)];
      controller.enqueue(bytes.slice(offset, offset + Math.max(1, size)));
      offset += Math.max(1, size);
    },
    cancel() {
      wasCancelled = true;
    },
  });
  return { body, cancelled: () => wasCancelled };
}

/** mulberry32: a small seeded PRNG giving floats in [0, 1), so a failure replays exactly. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
