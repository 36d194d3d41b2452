/**
 * What a `catchUp` run costs at the edge (issue 31): against the test kit's
 * `FakeApiServer` holding N ConfigMaps of about 1 KB (labels, a few data
 * keys), for N = 500, 5000 and 50,000, it runs a first `catchUp` (lists
 * everything, writes a snapshot), then runs with 0, 1 and 100 ConfigMaps
 * updated on the server between runs, and prints per run: bytes read and
 * written, values read and written (`kvCheckpointStorage` over an in-memory
 * key-value namespace that counts them, `minWriteIntervalMs: 0` so nothing
 * waits), what the save wrote (`saved.written`) and the wall time (median of
 * rounds). The same for `memoryCheckpointStorage` (bytes through its streams).
 * The baseline, measured in the same run, is what every run wrote before the
 * incremental format: a whole `saveCheckpoint` of the objects (no `changes`);
 * the table shows bytes written over it.
 *
 * With `--edge` (or by default when workerd, esbuild and edge-runtime are in
 * node_modules and `--no-edge` is not given), examples/edge_worker.ts is also
 * bundled with esbuild and timed per request, 5000 objects with 1 change per
 * request: on workerd (process CPU per request, read from /proc/<pid>/stat, as
 * workerd does not report CPU per request) and on Vercel's edge-runtime.
 *
 * Run: `deno run -A benchmarks/edge_catch_up_bench.ts [--objects 500,5000] [--rounds N] [--no-edge]`
 * or `node npm/esm/benchmarks/edge_catch_up_bench.js` after `node scripts/build_npm.mjs --no-test`.
 *
 * @module
 */
import { catchUp, KubeClient, type KubeObject, resourceListerWatcher } from "../mod.ts";
import {
  type CheckpointCache,
  checkpointCache,
  type CheckpointStorage,
  type KeyValueNamespaceLike,
  kvCheckpointStorage,
  memoryCheckpointStorage,
  saveCheckpoint,
} from "../checkpoint.ts";
import { FakeApiServer } from "../testkit.ts";
import { edgeRequests, type EdgeTiming } from "./_edge_request_bench.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
const arg = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
const counts = (arg("objects") ?? "500,5000,50000").split(",").map(Number);
if (counts.some((n) => !(n > 0))) throw new TypeError("--objects takes counts like 500,5000");
const roundsArg = Number(arg("rounds")) || undefined;
const runtime = g.Deno ? `Deno ${g.Deno.version.deno}` : `Node ${g.process.version}`;
const NAMESPACE = "bench";

/** A ConfigMap of about 1 KB of JSON as the server sends it: labels, an annotation, a few data keys. */
function configMap(i: number, generation = 0): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `config-${String(i).padStart(6, "0")}`,
      namespace: NAMESPACE,
      labels: {
        app: `app-${i % 100}`,
        tier: i % 2 ? "front" : "back",
        "app.kubernetes.io/managed-by": "bench",
      },
      annotations: { "example.com/owner": `team-${i % 7}` },
    },
    data: {
      "config.yaml": `replicas: ${i % 5}\ngeneration: ${generation}\n` + "x: y\n".repeat(100),
      "feature-flags": JSON.stringify({ a: true, b: i % 3 === 0, c: `value-${i}` }),
      "endpoint": `https://service-${i}.example.com:8443/api`,
      "owner": `team-${i % 7}`,
    },
  };
}

/** An in-memory KV namespace that counts what goes through it. */
function countingKv() {
  const map = new Map<string, Uint8Array>();
  const c = { bytesRead: 0, bytesWritten: 0, valuesRead: 0, valuesWritten: 0, deletes: 0 };
  const kv: KeyValueNamespaceLike = {
    get(key) {
      const v = map.get(key);
      c.valuesRead++;
      if (!v) return Promise.resolve(null);
      c.bytesRead += v.byteLength;
      return Promise.resolve(v.slice().buffer);
    },
    put(key, value) {
      const v = value instanceof Uint8Array ? value.slice() : new Uint8Array(value).slice();
      c.valuesWritten++;
      c.bytesWritten += v.byteLength;
      map.set(key, v);
      return Promise.resolve();
    },
    delete(key) {
      c.deletes++;
      map.delete(key);
      return Promise.resolve();
    },
  };
  return { kv, counts: c, map };
}

/** A storage that counts the bytes through its streams (values: one per get/put). */
function countingStorage(inner: CheckpointStorage) {
  const c = { bytesRead: 0, bytesWritten: 0, valuesRead: 0, valuesWritten: 0, deletes: 0 };
  const storage: CheckpointStorage = {
    async get(key, o) {
      c.valuesRead++;
      const data = await inner.get(key, o);
      if (!data) return undefined;
      return (async function* () {
        for await (const chunk of data) {
          c.bytesRead += chunk.byteLength;
          yield chunk;
        }
      })();
    },
    put(key, data, o) {
      c.valuesWritten++;
      return inner.put(
        key,
        (async function* () {
          for await (const chunk of data) {
            c.bytesWritten += chunk.byteLength;
            yield chunk;
          }
        })(),
        o,
      );
    },
    delete(key, o) {
      c.deletes++;
      return inner.delete(key, o);
    },
  };
  return { storage, counts: c };
}

type Counts = ReturnType<typeof countingKv>["counts"];
const snapshot = (c: Counts) => ({ ...c });
const diff = (a: Counts, b: Counts) => ({
  bytesRead: b.bytesRead - a.bytesRead,
  bytesWritten: b.bytesWritten - a.bytesWritten,
  valuesRead: b.valuesRead - a.valuesRead,
  valuesWritten: b.valuesWritten - a.valuesWritten,
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmtBytes = (n: number) =>
  n < 10_000 ? `${n} B` : n < 1e6 ? `${(n / 1e3).toFixed(1)} kB` : `${(n / 1e6).toFixed(2)} MB`;
const fmtMs = (n: number) => n < 10 ? `${n.toFixed(1)} ms` : `${n.toFixed(0)} ms`;

interface Row {
  objects: number;
  storage: string;
  run: string;
  bytesRead: number;
  bytesWritten: number;
  valuesRead: number;
  valuesWritten: number;
  written: string;
  ms: number;
  baselineWritten?: number;
  baselineMs?: number;
}
const rows: Row[] = [];

const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "configmaps" };

for (const n of counts) {
  const rounds = roundsArg ?? 5;
  const server = await FakeApiServer.start({ historySize: 1_000 });
  try {
    for (let i = 0; i < n; i++) server.create(configMap(i));
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: NAMESPACE,
    });
    const kv = countingKv();
    const warmKv = countingKv();
    const mem = countingStorage(memoryCheckpointStorage());
    const storages: [string, CheckpointStorage, Counts, CheckpointCache?][] = [
      ["kv", kvCheckpointStorage(kv.kv, { minWriteIntervalMs: 0, prefix: "ckpt/" }), kv.counts],
      // a warm process: the decoded checkpoint kept between runs (what a Worker isolate keeps)
      [
        "kv + cache",
        kvCheckpointStorage(warmKv.kv, { minWriteIntervalMs: 0, prefix: "ckpt/" }),
        warmKv.counts,
        checkpointCache(),
      ],
      ["memory", mem.storage, mem.counts],
    ];
    let generation = 0;
    for (const [name, storage, c, cache] of storages) {
      const opts = {
        storage,
        key: `v1/configmaps/${NAMESPACE}`,
        identity,
        budgetMs: 120_000,
        onError: () => {},
        cache,
      };
      const before = snapshot(c);
      const t0 = performance.now();
      const first = await catchUp(lw, opts);
      const ms = performance.now() - t0;
      if (!first.complete || first.objects.size !== n) {
        throw new Error(`first run incomplete at ${n}`);
      }
      rows.push({
        objects: n,
        storage: name,
        run: "first (lists all)",
        ...diff(before, snapshot(c)),
        written: first.saved?.written ?? "-",
        ms,
      });
      for (const changes of [0, 1, 100]) {
        const samples: Row[] = [];
        const baseline: { bytes: number; ms: number }[] = [];
        for (let r = 0; r < rounds; r++) {
          generation++;
          for (let k = 0; k < changes; k++) {
            server.update(configMap((generation * 7919 + k * 104_729) % n, generation));
          }
          const b = snapshot(c);
          const t = performance.now();
          const res = await catchUp(lw, opts);
          const runMs = performance.now() - t;
          if (!res.complete || res.changes.length !== changes) {
            throw new Error(
              `${n}/${changes}: complete ${res.complete}, ${res.changes.length} changes`,
            );
          }
          samples.push({
            objects: n,
            storage: name,
            run: `${changes} change${changes === 1 ? "" : "s"}`,
            ...diff(b, snapshot(c)),
            written: res.saved?.written ?? "-",
            ms: runMs,
          });
          // the baseline: the whole checkpoint written, as every run did before the incremental format
          const fresh = countingKv();
          const base = kvCheckpointStorage(fresh.kv, { minWriteIntervalMs: 0, prefix: "ckpt/" });
          const tb = performance.now();
          await saveCheckpoint(base, opts.key, {
            identity,
            resourceVersion: res.resourceVersion,
            items: res.objects.values(),
          });
          baseline.push({ bytes: fresh.counts.bytesWritten, ms: performance.now() - tb });
        }
        const pick = (f: (r: Row) => number) => median(samples.map(f));
        const writtens = [...new Set(samples.map((s) => s.written))].join("/");
        rows.push({
          ...samples[0],
          bytesRead: pick((r) => r.bytesRead),
          bytesWritten: pick((r) => r.bytesWritten),
          valuesRead: pick((r) => r.valuesRead),
          valuesWritten: pick((r) => r.valuesWritten),
          written: writtens,
          ms: pick((r) => r.ms),
          baselineWritten: median(baseline.map((x) => x.bytes)),
          baselineMs: median(baseline.map((x) => x.ms)),
        });
      }
      console.error(`${runtime}: ${n} objects, ${name} storage done`);
    }
  } finally {
    await server.close();
  }
}

console.log(`\ncatchUp per run, ${runtime} (median of runs; bytes and values per run):\n`);
console.log(
  "| objects | storage | run | bytes read | values read | bytes written | values written | saved.written | time per run | whole save before (bytes, time) | written ÷ before |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows) {
  const before = r.baselineWritten === undefined
    ? "-"
    : `${fmtBytes(r.baselineWritten)}, ${fmtMs(r.baselineMs!)}`;
  const ratio = r.baselineWritten ? (r.bytesWritten / r.baselineWritten).toPrecision(2) : "-";
  console.log(
    `| ${r.objects} | ${r.storage} | ${r.run} | ${fmtBytes(r.bytesRead)} | ${
      r.storage.startsWith("kv") ? r.valuesRead : "-"
    } | ${fmtBytes(r.bytesWritten)} | ${r.valuesWritten} | ${r.written} | ${
      fmtMs(r.ms)
    } | ${before} | ${ratio} |`,
  );
}

// ---------- the edge worker example on workerd and edge-runtime ----------
// Every size and number of changes of the table above; `--edge-objects 5000` picks sizes (default: `--objects`).
if (!argv.includes("--no-edge")) {
  const edgeCounts = arg("edge-objects")?.split(",").map(Number) ?? counts;
  const lines: string[] = [];
  for (const objects of edgeCounts) {
    for (const changes of [0, 1, 100]) {
      const timings: EdgeTiming[] = await edgeRequests({
        objects,
        changes,
        requests: 10,
        configMap,
        namespace: NAMESPACE,
      });
      for (const t of timings) {
        lines.push(
          `| ${t.runtime} | ${objects} | ${changes} | ${t.requests} | ${fmtMs(t.medianMs)}, ${
            fmtMs(t.maxMs)
          } | ${t.cpuMsPerRequest === undefined ? "-" : fmtMs(t.cpuMsPerRequest)} |`,
        );
      }
    }
  }
  if (lines.length) {
    console.log(
      `\nexamples/edge_worker.ts bundled with esbuild (a warm isolate: its checkpointCache), changes made before each request:\n`,
    );
    console.log(
      "| runtime | objects | changes | requests | wall time per request (median, max) | CPU per request |",
    );
    console.log("|---|---|---|---|---|---|");
    for (const line of lines) console.log(line);
    console.log(
      "\nCPU on workerd: the workerd process's utime+stime (/proc/<pid>/stat, 10 ms ticks) before/after each request, summed ÷ requests; on edge-runtime: the bench process's CPU (process.cpuUsage) around each request ÷ requests, the test server's included.",
    );
  }
}
