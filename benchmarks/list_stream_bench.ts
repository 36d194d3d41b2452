/**
 * List decoder throughput against a baseline measured in the same run: the
 * same bytes read from the same kind of stream, joined, decoded by one
 * TextDecoder call and passed to one `JSON.parse` (what `Response.json()`
 * does). Prints the ratio decoder/baseline for 100k small items
 * (ConfigMaps, compact and pretty-printed) and a few 1 MB items.
 * Run: `deno run benchmarks/list_stream_bench.ts` or, after
 * `npm run build:npm`, `node npm/esm/benchmarks/list_stream_bench.js`.
 *
 * @module
 */
import { decodeListStream } from "../src/transport/list_stream.ts";
import { chunks, median, readAllText, streamOf } from "./_bench.ts";

const enc = new TextEncoder();

function makeList(count: number, dataSize: number, pretty: boolean): Uint8Array {
  const filler = "é✓x".repeat(Math.ceil(dataSize / 3)).slice(0, dataSize);
  const items = [];
  for (let i = 0; i < count; i++) {
    items.push({
      kind: "ConfigMap",
      apiVersion: "v1",
      metadata: {
        name: `cm-${i}`,
        namespace: `ns-${i % 50}`,
        resourceVersion: String(1000 + i),
        labels: { app: "bench", shard: String(i % 7) },
      },
      data: { payload: filler, index: String(i) },
    });
  }
  const list = {
    kind: "ConfigMapList",
    apiVersion: "v1",
    metadata: { resourceVersion: "123456" },
    items,
  };
  return enc.encode(pretty ? JSON.stringify(list, null, 2) : JSON.stringify(list));
}

async function baseline(parts: Uint8Array[]): Promise<number> {
  return JSON.parse(await readAllText(parts)).items.length;
}

async function decoder(parts: Uint8Array[]): Promise<number> {
  return (await decodeListStream(streamOf(parts))).items.length;
}

const cases: Array<[string, Uint8Array, number]> = [
  ["100k small items, compact, 64 KiB chunks", makeList(100_000, 200, false), 64 * 1024],
  ["100k small items, pretty, 64 KiB chunks", makeList(100_000, 200, true), 64 * 1024],
  ["5 items of 1 MB, 64 KiB chunks", makeList(5, 1_000_000, false), 64 * 1024],
  ["5k small items, 7-byte chunks", makeList(5_000, 200, false), 7],
];
console.log("case | bytes | baseline ms | decoder ms | ratio (decoder/baseline)");
for (const [label, bytes, size] of cases) {
  const parts = chunks(bytes, size);
  const a = await decoder(parts);
  const b = await baseline(parts);
  if (a !== b) throw new Error(`item counts differ: ${a} vs ${b}`);
  const tb = await median(() => baseline(parts), 7);
  const td = await median(() => decoder(parts), 7);
  console.log(
    `${label} | ${bytes.length} | ${tb.toFixed(1)} | ${td.toFixed(1)} | ${(td / tb).toFixed(2)}`,
  );
}
