/**
 * Checkpoints at scale: saves and loads 10,000 and 100,000 ConfigMaps of
 * about 1 KB each through `memoryCheckpointStorage` and
 * `fileCheckpointStorage`, and prints for each: the checkpoint's size, the
 * save and load times (median of rounds), the load time over the baseline
 * (`JSON.parse` of the same objects as one JSON array text, measured in the
 * same run), the save time over `JSON.stringify` of that array, the heap
 * held by the loaded objects over the heap held by the baseline's, and the
 * longest the event loop waited for a turn during a save and a load (a
 * timer that re-arms itself; the format's promise is a turn about every
 * MiB).
 *
 * Run: `deno run -A --v8-flags=--expose-gc benchmarks/checkpoint_bench.ts [--objects N]`
 * or `node --expose-gc npm/esm/benchmarks/checkpoint_bench.js` after `npm run build:npm`.
 *
 * @module
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../mod.ts";
import {
  type CheckpointStorage,
  loadCheckpoint,
  memoryCheckpointStorage,
  saveCheckpoint,
} from "../checkpoint.ts";
import { fileCheckpointStorage } from "../checkpoint_file.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
const only = Number(argv[argv.indexOf("--objects") + 1]) || undefined;
const counts = only ? [only] : [10_000, 100_000];
const heap = (): number => {
  g.gc?.();
  return g.Deno ? g.Deno.memoryUsage().heapUsed : g.process.memoryUsage().heapUsed;
};
if (!g.gc) console.warn("run with --expose-gc for stable numbers");

const identity = {
  server: "https://k8s.example.com:6443",
  apiVersion: "v1",
  resource: "configmaps",
  cluster: "2f9a3c1e-7b64-4d2a-9c1f-0e5d8b7a6c43",
};

function configMap(i: number): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `config-${i}`,
      namespace: `ns-${i % 50}`,
      uid: `6b1f7a2c-0d4e-4f8a-9b3c-${String(i).padStart(12, "0")}`,
      resourceVersion: String(100_000 + i),
      creationTimestamp: "2026-01-01T00:00:00Z",
      labels: { app: `app-${i % 100}`, tier: i % 2 ? "front" : "back" },
    },
    data: { "config.yaml": `key: value-${i}\n` + "x".repeat(700) },
  };
}

/** Runs `fn` while a self-rearming timer measures the longest wait for a turn of the event loop (ms). */
async function stallOf(fn: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let stallMs = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
    timer = setTimeout(tick, 0);
  };
  timer = setTimeout(tick, 0);
  try {
    await fn();
    return Math.max(stallMs, performance.now() - last);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The heap held by what `load` resolves, measured inside a function of its
 * own (a suspended top-level frame can keep temporaries alive).
 */
async function heapHeldBy(load: () => Promise<{ items: unknown[] } | undefined>, count: number) {
  const before = heap();
  const held = await load();
  const after = heap();
  if (held?.items.length !== count) throw new Error("objects lost");
  return after - before;
}

async function median(rounds: number, fn: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const ms = (n: number) => `${n.toFixed(0)} ms`;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

const dir = await mkdtemp(join(tmpdir(), "kube-reflector-ckpt-bench-"));
try {
  for (const count of counts) {
    const rounds = count >= 100_000 ? 3 : 7;
    let items: KubeObject[] | undefined = Array.from({ length: count }, (_, i) => configMap(i));
    // baseline: the same objects as one JSON array text
    let text: string | undefined = JSON.stringify(items);
    const stringifyMs = await median(rounds, () => Promise.resolve(JSON.stringify(items)));
    const parseMs = await median(rounds, () => Promise.resolve(JSON.parse(text!)));
    const baselineHeap = await heapHeldBy(
      () => Promise.resolve({ items: JSON.parse(text!) }),
      count,
    );
    const textBytes = new TextEncoder().encode(text).length;
    text = undefined;
    console.log(
      `\n${count} ConfigMaps: JSON array ${mb(textBytes)}; JSON.stringify ${ms(stringifyMs)}, ` +
        `JSON.parse ${ms(parseMs)} (baseline), objects hold ${mb(baselineHeap)} of heap`,
    );
    const storages: [string, CheckpointStorage][] = [
      ["memory", memoryCheckpointStorage()],
      ["file", fileCheckpointStorage(dir)],
    ];
    for (const [name, storage] of storages) {
      const key = `bench-${count}`;
      let bytes = 0;
      const saveMs = await median(rounds, async () => {
        bytes =
          (await saveCheckpoint(storage, key, { identity, resourceVersion: "1", items: items! }))
            .bytes;
      });
      const saveStall = await stallOf(() =>
        saveCheckpoint(storage, key, { identity, resourceVersion: "1", items: items! })
      );
      const loadMs = await median(rounds, () => loadCheckpoint(storage, key, identity));
      const loadStall = await stallOf(() => loadCheckpoint(storage, key, identity));
      const loadedHeap = await heapHeldBy(() => loadCheckpoint(storage, key, identity), count);
      console.log(
        `  ${name.padEnd(6)} size ${mb(bytes)}; save ${ms(saveMs)} (${
          (saveMs / stringifyMs).toFixed(2)
        }× ` +
          `stringify, longest stall ${ms(saveStall)}); load ${ms(loadMs)} (${
            (loadMs / parseMs).toFixed(2)
          }× ` +
          `JSON.parse, longest stall ${ms(loadStall)}); heap after load ${mb(loadedHeap)} ` +
          `(${(loadedHeap / baselineHeap).toFixed(2)}× baseline)`,
      );
      await storage.delete(key);
    }
    items = undefined;
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
