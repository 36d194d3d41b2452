/**
 * Memory of a large reflected list (scenario 18): 100,000 ConfigMaps listed over real HTTP from the embedded
 * test API server into an Indexer, then relisted. The server runs in a worker thread
 * (`_relist_server_worker.ts`): its heap, which holds the list it serializes, is
 * not the client's, and is not counted. Prints, against a baseline
 * measured in the same process (the heap held by the same objects parsed
 * with plain `JSON.parse` and kept in an array):
 *   - store / baseline: what the store costs over the bare objects;
 *   - relist peak / store: the highest heap seen during a relist, over the
 *     steady state (the old store is still readable while the new list
 *     arrives, so about 2× is the floor for an atomic replace).
 * Run: `deno run -A --v8-flags=--expose-gc benchmarks/relist_memory_bench.ts [--objects N]`
 * or `node --expose-gc npm/esm/benchmarks/relist_memory_bench.js` after `npm run build:npm`.
 *
 * @module
 */
import {
  Indexer,
  KubeClient,
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
const reflector = new Reflector(lw, store, { name: "bench", onError: () => {} });
const ac = new AbortController();
const done = reflector.run({ signal: ac.signal });
await reflector.synced;
const storeBytes = heap() - h1;

// Relist: force one with a 410 on the running watch, sampling the heap
// meanwhile, until the store holds the relisted objects (replace is atomic:
// one object replaced means all are).
sampling = true;
const sampler = setInterval(sample, 2);
const probeKey = store.listKeys()[0];
const probe = store.getByKey(probeKey);
await ask("relist");
const t0 = Date.now();
while (store.getByKey(probeKey) === probe && Date.now() - t0 < 60_000) {
  await new Promise((r) => setTimeout(r, 5));
}
if (store.getByKey(probeKey) === probe) throw new Error("no relist within 60 s");
clearInterval(sampler);
sample();
sampling = false;
const after = heap() - h1;
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
console.log(
  `relist peak heap:                             ${mb(peak)} MiB  ratio peak/store = ${
    (peak / storeBytes).toFixed(2)
  }`,
);
console.log(
  `after relist:                                 ${mb(after)} MiB  ratio after/store = ${
    (after / storeBytes).toFixed(2)
  }`,
);
