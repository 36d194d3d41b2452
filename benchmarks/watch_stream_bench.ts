/**
 * Watch decoder throughput against a baseline measured in the same run:
 * the same bytes decoded by one TextDecoder call, split on "\n" and passed
 * through plain JSON.parse (the least a decoder must do). Prints the
 * ratio decoder/baseline for small events (ConfigMaps), 1 MB events, and
 * 1-byte-ish worst-case chunking. Run: `deno run benchmarks/watch_stream_bench.ts`
 * or, after `npm run build:npm`, `node npm/esm/benchmarks/watch_stream_bench.js`.
 *
 * @module
 */
import { watchStream } from "../src/transport/watch_stream.ts";
import { chunks, median, readAllText, streamOf } from "./_bench.ts";

const enc = new TextEncoder();

function makeEvents(count: number, dataSize: number): Uint8Array {
  const lines: string[] = [];
  const filler = "é✓x".repeat(Math.ceil(dataSize / 3)).slice(0, dataSize);
  for (let i = 0; i < count; i++) {
    lines.push(JSON.stringify({
      type: "MODIFIED",
      object: {
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: {
          name: `cm-${i}`,
          namespace: "bench",
          resourceVersion: String(1000 + i),
          labels: { app: "demo" },
        },
        data: { payload: filler },
      },
    }));
  }
  return enc.encode(lines.join("\n") + "\n");
}

async function baseline(parts: Uint8Array[]): Promise<number> {
  let n = 0;
  for (const line of (await readAllText(parts)).split("\n")) {
    if (line) {
      JSON.parse(line);
      n++;
    }
  }
  return n;
}

async function decoder(parts: Uint8Array[]): Promise<number> {
  let n = 0;
  for await (const _ of watchStream(streamOf(parts))) n++;
  return n;
}

const cases: Array<[string, Uint8Array, number]> = [
  ["20k small events, 16 KiB chunks", makeEvents(20_000, 200), 16 * 1024],
  ["20 events of 1 MB, 16 KiB chunks", makeEvents(20, 1_000_000), 16 * 1024],
  ["2k small events, 7-byte chunks", makeEvents(2_000, 200), 7],
];
console.log("case | bytes | baseline ms | decoder ms | ratio (decoder/baseline)");
for (const [label, bytes, size] of cases) {
  const parts = chunks(bytes, size);
  const a = await decoder(parts);
  const b = await baseline(parts);
  if (a !== b) throw new Error(`event counts differ: ${a} vs ${b}`);
  const tb = await median(() => baseline(parts), 7);
  const td = await median(() => decoder(parts), 7);
  console.log(
    `${label} | ${bytes.length} | ${tb.toFixed(1)} | ${td.toFixed(1)} | ${(td / tb).toFixed(2)}`,
  );
}
