/**
 * Helpers shared by the decoder benchmarks: split bytes into chunks, stream
 * them, read a stream back whole (what `Response.json()` does before
 * parsing), and take the median of timed rounds after a warm-up.
 *
 * @module
 */

/** `bytes` cut into chunks of `size` bytes. */
export function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** A stream that delivers `parts` one by one. */
export function streamOf(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(c) {
      if (i < parts.length) c.enqueue(parts[i++]);
      else c.close();
    },
  });
}

/** Reads the stream of `parts` and decodes it as one string (the baseline's first step). */
export async function readAllText(parts: Uint8Array[]): Promise<string> {
  const reader = streamOf(parts).getReader();
  const got: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    got.push(value);
    total += value.length;
  }
  const all = new Uint8Array(total);
  let off = 0;
  for (const g of got) {
    all.set(g, off);
    off += g.length;
  }
  return new TextDecoder().decode(all);
}

/** Median duration in ms of `rounds` runs of `fn`, after one warm-up run. */
export async function median(fn: () => Promise<number>, rounds: number): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}
