/**
 * Memory of a large reflected list (scenario 18): 100,000 ConfigMaps listed over real HTTP from the embedded
 * test API server into an Indexer, then relisted. The server runs in a worker thread
 * (`_relist_server_worker.ts`): its heap, which holds the list it serializes, is
 * not the client's, and is not counted. Prints, against a baseline
 * measured in the same process (the heap held by the same objects parsed
 * with plain `JSON.parse` and kept in an array):
 *   - store / baseline: what the store costs over the bare objects;
 *   - relist peak / store: the highest heap seen during a relist (sampled
 *     at every body chunk and every 2 ms, garbage included), over the
 *     steady state. Measured twice on the same store: with the listed
 *     copies of unchanged objects held until the list completes (reuse off,
 *     as client-go does: the old store stays readable while the new list
 *     arrives, so 2× is then the floor for an atomic replace), and as the
 *     Reflector does by default, handing the store's own copy of each
 *     unchanged object on as each page arrives (`Store.unchanged`).
 * Run: `deno run -A --v8-flags=--expose-gc benchmarks/relist_memory_bench.ts [--objects N]`
 * or `node --expose-gc npm/esm/benchmarks/relist_memory_bench.js` after `npm run build:npm`.
 *
 * @module
 */
import {
  Indexer,
  KubeClient,
  type KubeObject,
  metaNamespaceKeyFunc,
  namespaceIndexFunc,
  Reflector,
  resourceListerWatcher,
} from "../mod.ts";
import { Worker } from "node:worker_threads";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
const count = Number(argv[argv.indexOf("--objects") + 1] || 100_000) || 100_000;
const heap = (): number => {
  g.gc?.();
  return g.Deno ? g.Deno.memoryUsage().heapUsed : g.process.memoryUsage().heapUsed;
};
const rawHeap =
  (): number => (g.Deno ? g.Deno.memoryUsage().heapUsed : g.process.memoryUsage().heapUsed);
if (!g.gc) console.warn("run with --expose-gc for stable numbers");

const ext = import.meta.url.endsWith(".ts") ? ".ts" : ".js";
const worker = new Worker(new URL(`./_relist_server_worker${ext}`, import.meta.url), {
  workerData: { count },
});
const replies: Array<(url: string) => void> = [];
worker.on("message", (url: string) => replies.shift()?.(url));
const reply = () => new Promise<string>((resolve) => replies.push(resolve));
const ask = (msg: "relist" | "close") => {
  const p = reply();
  worker.postMessage(msg);
  return p;
};
const url = await reply(); // listening, objects created
const mb = (b: number) => (b / 1048576).toFixed(1);

// Baseline: the same objects as plain JSON.parse of the same bytes, kept in an array.
const h0 = heap();
let baseline: unknown[] | undefined = [];
{
  let token = "";
  do {
    const res = await fetch(
      `${url}/api/v1/configmaps?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`,
    );
    const page = JSON.parse(await res.text());
    for (const item of page.items) baseline.push(item);
    token = page.metadata.continue ?? "";
  } while (token);
}
const baselineBytes = heap() - h0;
baseline = undefined;
heap();

const h1 = heap();
const store = new Indexer(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
// Samples the heap at every body chunk too: a body already buffered is read
// without a turn of the event loop, so a timer alone would miss the peak.
let peak = 0;
let sampling = false;
const sample = () => void (peak = Math.max(peak, rawHeap() - h1));
const sampledFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  if (!sampling || !res.body) return res;
  const tap = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      sample();
      controller.enqueue(chunk);
    },
  });
  return new Response(res.body.pipeThrough(tap), res);
};
const lw = resourceListerWatcher(new KubeClient({ server: url, fetch: sampledFetch }), {
  apiVersion: "v1",
  resource: "configmaps",
});
let reuse = false;
let lists = 0;
const reflector = new Reflector(lw, store, {
  name: "bench",
  onError: () => {},
  // the default (store.unchanged), switched off for the first relist
  reuseListed: (listed) => reuse ? store.unchanged(listed as KubeObject) : undefined,
  observer: { listDone: () => void lists++ },
});
const ac = new AbortController();
const done = reflector.run({ signal: ac.signal });
await reflector.synced;
const storeBytes = heap() - h1;

// Relist: force one with a 410 on the running watch, sampling the heap
// meanwhile, until the store holds the relisted objects (the list's end is
// observed, and replace follows it in the same turn).
async function relist(): Promise<{ peak: number; after: number; ms: number }> {
  peak = 0;
  sampling = true;
  const sampler = setInterval(sample, 2);
  const before = lists;
  const t0 = Date.now();
  await ask("relist");
  while (lists === before && Date.now() - t0 < 60_000) {
    await new Promise((r) => setTimeout(r, 5));
  }
  if (lists === before) throw new Error("no relist within 60 s");
  const ms = Date.now() - t0;
  clearInterval(sampler);
  sample();
  sampling = false;
  return { peak, after: heap() - h1, ms };
}
const held = await relist(); // reuse off: every listed copy held until the list ends
reuse = true;
const reused = await relist(); // the default
ac.abort();
await done;
await ask("close");
await worker.terminate();

console.log(`objects: ${store.list().length}`);
console.log(`baseline (plain JSON.parse, kept in an array): ${mb(baselineBytes)} MiB`);
console.log(
  `store (Indexer with namespace index):         ${mb(storeBytes)} MiB  ratio store/baseline = ${
    (storeBytes / baselineBytes).toFixed(2)
  }`,
);
for (const [what, r] of [["listed copies held", held], ["unchanged reused ", reused]] as const) {
  console.log(
    `relist peak heap, ${what}:        ${mb(r.peak)} MiB  ratio peak/store = ${
      (r.peak / storeBytes).toFixed(2)
    }  (${r.ms} ms; after: ${(r.after / storeBytes).toFixed(2)}× the store)`,
  );
}
