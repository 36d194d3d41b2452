/**
 * Memory of a large reflected list (scenario 18): 100,000 ConfigMaps listed over real HTTP from the embedded
 * test API server into an Indexer, then relisted. Prints, against a baseline
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
import { FakeApiServer } from "../testkit.ts";

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

const server = await FakeApiServer.start({ paginateResourceVersionZero: true });
const filler = "x".repeat(200);
const n = count;
for (let i = 0; i < n; i++) {
  server.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `cm-${i}`,
      namespace: `ns-${i % 50}`,
      labels: { app: "bench", shard: String(i % 7) },
    },
    data: { payload: filler, index: String(i) },
  });
}
const url = server.url;
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
const lw = resourceListerWatcher(new KubeClient({ server: url }), {
  apiVersion: "v1",
  resource: "configmaps",
});
const reflector = new Reflector(lw, store, { name: "bench", onError: () => {} });
const ac = new AbortController();
const done = reflector.run({ signal: ac.signal });
await reflector.synced;
const storeBytes = heap() - h1;

// Relist: force one with a 410 on the running watch, sampling the heap meanwhile.
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, rawHeap() - h1)), 2);
const lists = server.requests.filter((r) => r.verb === "list").length;
server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
server.endWatches();
const t0 = Date.now();
while (Date.now() - t0 < 60_000) {
  const relisted = server.requests.filter((r) => r.verb === "list").length > lists &&
    server.requests.filter((r) => r.verb === "watch").length >= 2 &&
    reflector.lastSyncResourceVersion === server.resourceVersion;
  if (relisted) break;
  await new Promise((r) => setTimeout(r, 5));
}
clearInterval(sampler);
const after = heap() - h1;
ac.abort();
await done;
await server.close();

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
