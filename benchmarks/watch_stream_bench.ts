/**
 * Watch decoder throughput against a baseline measured in the same run:
 * the same bytes decoded by one TextDecoder call, split on "\n" and passed
 * through plain JSON.parse (the least a decoder must do). Prints the
 * ratio decoder/baseline for 1 KB ASCII events, small events (ConfigMaps), 1 MB events, and
 * 1-byte-ish worst-case chunking. Run: `deno run benchmarks/watch_stream_bench.ts`
 * or, after `npm run build:npm`, `node npm/esm/benchmarks/watch_stream_bench.js`.
 *
 * @module
 */
import { StrictUtf8Decoder } from "../src/transport/_strict_utf8_decoder.ts";
import { watchStream } from "../src/transport/watch_stream.ts";
import { chunks, median, readAllText, streamOf } from "./_bench.ts";

const enc = new TextEncoder();

function makeEvents(count: number, dataSize: number, chars = "é✓x"): Uint8Array {
  const lines: string[] = [];
  const filler = chars.repeat(Math.ceil(dataSize / chars.length)).slice(0, dataSize);
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
  // Kubernetes objects are mostly ASCII: 1 KB ConfigMaps in 64 KiB reads
  ["20k ASCII events of 1 KB, 64 KiB chunks", makeEvents(20_000, 800, "abcxyz"), 64 * 1024],
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

// UTF-8 decoding alone, the same 64 KiB reads: StrictUtf8Decoder (what the
// decoders use) against a fatal TextDecoder in stream mode (what they used
// before; Deno's fatal decoder is about ten times slower than its
// replacing one) and a replacing TextDecoder (the floor: it cannot tell
// mangled bytes from text).
console.log(
  "\nUTF-8 decoding of 64 KiB reads | fatal stream ms | replacing ms | strict ms | strict/fatal | strict/replacing",
);
for (
  const [label, bytes] of [
    ["ASCII 1 KB events", cases[0][1]],
    ["1 KB events with é and ✓", makeEvents(20_000, 800)],
  ] as const
) {
  const parts = chunks(bytes, 64 * 1024);
  const timed = (decode: (part: Uint8Array) => string) =>
    median(() => {
      let n = 0;
      for (const part of parts) n += decode(part).length;
      return Promise.resolve(n);
    }, 7);
  const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const replacing = new TextDecoder("utf-8", { ignoreBOM: true });
  const strict = new StrictUtf8Decoder();
  const tf = await timed((p) => fatal.decode(p, { stream: true }));
  const tr = await timed((p) => replacing.decode(p, { stream: true }));
  const ts = await timed((p) => strict.decode(p));
  console.log(
    `${label} | ${tf.toFixed(1)} | ${tr.toFixed(1)} | ${ts.toFixed(1)} | ${
      (ts / tf).toFixed(2)
    } | ${(ts / tr).toFixed(2)}`,
  );
}
