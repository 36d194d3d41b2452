/**
 * The edge part of edge_catch_up_bench.ts: examples/edge_worker.ts bundled
 * with esbuild (as tests/workerd/edge_worker_example_smoke.mjs does) and
 * timed per request against a FakeApiServer holding `objects` ConfigMaps,
 * with `changes` ConfigMaps updated before each request:
 *
 * - on workerd (devDependency @cloudflare/workerd-linux-64), with a real
 *   `kvNamespace` binding backed by an in-memory KV service in this process;
 *   CPU per request is the workerd process's CPU time (utime + stime from
 *   /proc/<pid>/stat, before and after each request) over the requests, as
 *   workerd does not report CPU per request;
 * - on Vercel's edge-runtime (devDependency edge-runtime, its EdgeRuntime),
 *   in this process with an in-memory KV object; wall time only (the test
 *   server shares the process, so its CPU cannot be told apart).
 *
 * The example's storage keeps Workers KV's one write per second per key
 * (`minWriteIntervalMs` 1000), so requests are spaced 1.1 s apart and the
 * time between them is not counted. The first request (the full list) and
 * one more are warm-ups, not counted.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KubeObject } from "../mod.ts";
import { FakeApiServer } from "../testkit.ts";

/** One runtime's numbers. */
export interface EdgeTiming {
  runtime: string;
  requests: number;
  medianMs: number;
  maxMs: number;
  cpuMsPerRequest?: number;
  cpuHow: string;
}

interface EdgeOptions {
  objects: number;
  changes: number;
  requests: number;
  configMap: (i: number, generation?: number) => KubeObject;
  namespace: string;
}

const here = dirname(fileURLToPath(import.meta.url));
/** The repository (the folder with node_modules/.bin/esbuild), from benchmarks/ or npm/esm/benchmarks/. */
function repoRoot(): string | undefined {
  for (let dir = here; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules/.bin/esbuild"))) return dir;
  }
  return undefined;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** This process's CPU time in ms (user + system). */
function processCpuMs(): number {
  // deno-lint-ignore no-explicit-any
  const u = (globalThis as any).process?.cpuUsage?.();
  return u ? (u.user + u.system) / 1000 : 0;
}

/** utime + stime of a process in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // fields 14 and 15 of stat(5)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The service behind workerd's kvNamespace binding (GET/PUT/DELETE /<key>). */
function startKvService(): Promise<{ server: Server; port: number }> {
  const values = new Map<string, Uint8Array>();
  const server = createServer((req, res) => {
    const key = decodeURIComponent(new URL(req.url!, "http://kv").pathname.slice(1));
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET") {
        const v = values.get(key);
        if (v === undefined) res.writeHead(404).end();
        else res.writeHead(200, { "content-type": "application/octet-stream" }).end(v);
      } else if (req.method === "PUT") {
        let n = 0;
        for (const c of chunks) n += c.byteLength;
        const all = new Uint8Array(n);
        let off = 0;
        for (const c of chunks) all.set(c, (off += c.byteLength) - c.byteLength);
        values.set(key, all);
        res.writeHead(200).end();
      } else if (req.method === "DELETE") {
        values.delete(key);
        res.writeHead(200).end();
      } else res.writeHead(405).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(
      0,
      "127.0.0.1",
      () => resolve({ server, port: (server.address() as { port: number }).port }),
    )
  );
}

function bundle(root: string, entry: string, out: string, format: "esm" | "iife"): void {
  const r = spawnSync(join(root, "node_modules/.bin/esbuild"), [
    entry,
    "--bundle",
    "--platform=browser",
    `--format=${format}`,
    "--minify",
    `--outfile=${out}`,
    "--log-level=error",
  ], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`esbuild failed: ${r.stderr}`);
}

/**
 * Sends `warmup + requests` requests to `ask`, `changes` updates before each
 * (after the first), 1.1 s apart; times the last `requests`.
 */
async function timeRequests(
  o: EdgeOptions,
  server: FakeApiServer,
  ask: () => Promise<{ complete: boolean; changes: number; listed: string | null }>,
  cpu?: () => number,
) {
  const warmup = 2;
  const times: number[] = [];
  let cpuMs = 0;
  for (let r = 0; r < warmup + o.requests; r++) {
    if (r > 0) {
      for (let k = 0; k < o.changes; k++) {
        server.update(o.configMap((r * 7919 + k * 104_729) % o.objects, r));
      }
      await sleep(1_100);
    }
    const c0 = cpu?.() ?? 0;
    const t0 = performance.now();
    const answer = await ask();
    const ms = performance.now() - t0;
    const c1 = cpu?.() ?? 0;
    if (!answer.complete || (r > 0 && (answer.changes !== o.changes || answer.listed !== null))) {
      throw new Error(`request ${r}: ${JSON.stringify(answer)}`);
    }
    if (r >= warmup) {
      times.push(ms);
      cpuMs += c1 - c0;
    }
  }
  return { medianMs: median(times), maxMs: Math.max(...times), cpuMs };
}

async function onWorkerd(
  o: EdgeOptions,
  root: string,
  tmp: string,
  example: string,
  server: FakeApiServer,
): Promise<EdgeTiming> {
  const workerdBin = join(root, "node_modules/@cloudflare/workerd-linux-64/bin/workerd");
  const version = /workerd (\d{4}-\d{2}-\d{2})/.exec(
    spawnSync(workerdBin, ["--version"], { encoding: "utf8" }).stdout ?? "",
  )?.[1];
  if (!version) throw new Error("workerd --version failed");
  bundle(root, example, join(tmp, "worker.js"), "esm");
  const kv = await startKvService();
  const port = await freePort();
  writeFileSync(
    join(tmp, "edge.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "edge", worker = .edgeWorker),
    (name = "kv", external = (address = "127.0.0.1:${kv.port}", http = ())),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "edge")],
);
const edgeWorker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${version}",
  globalOutbound = "loopback",
  bindings = [
    (name = "KUBE_SERVER", text = "${server.url}"),
    (name = "NAMESPACE", text = "${o.namespace}"),
    (name = "CHECKPOINTS", kvNamespace = "kv"),
  ],
);
`,
  );
  const workerd = spawn(workerdBin, ["serve", join(tmp, "edge.capnp")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const log: string[] = [];
  workerd.stderr!.on("data", (d) => log.push(String(d)));
  const url = `http://127.0.0.1:${port}/objects?labelSelector=app%3Dapp-1`;
  try {
    for (const start = Date.now();;) {
      if (workerd.exitCode !== null) throw new Error(`workerd exited: ${log.join("")}`);
      try {
        await (await fetch(`http://127.0.0.1:${port}/`)).body?.cancel();
        break;
      } catch {
        if (Date.now() - start > 15_000) throw new Error(`workerd did not answer: ${log.join("")}`);
        await sleep(50);
      }
    }
    const t = await timeRequests(o, server, async () => {
      const res = await fetch(url);
      const body = await res.json();
      if (!res.ok) throw new Error(`workerd answered ${res.status}: ${JSON.stringify(body)}`);
      return body;
    }, () => cpuMsOf(workerd.pid!));
    return {
      runtime: `workerd ${version}`,
      requests: o.requests,
      medianMs: t.medianMs,
      maxMs: t.maxMs,
      cpuMsPerRequest: t.cpuMs / o.requests,
      cpuHow:
        "workerd process utime+stime (/proc/<pid>/stat, 10 ms ticks) before/after each request, summed ÷ requests",
    };
  } finally {
    workerd.kill("SIGTERM");
    await new Promise((r) => workerd.exitCode !== null ? r(0) : workerd.once("exit", r));
    await new Promise((r) => kv.server.close(r));
  }
}

async function onEdgeRuntime(
  o: EdgeOptions,
  root: string,
  tmp: string,
  example: string,
  server: FakeApiServer,
): Promise<EdgeTiming> {
  const pkg = join(root, "node_modules/edge-runtime/package.json");
  const version = JSON.parse(readFileSync(pkg, "utf8")).version;
  // the example's default export, with an in-memory KV namespace, answering fetch events
  writeFileSync(
    join(tmp, "edge_entry.js"),
    `import worker from ${JSON.stringify(example)};
const values = new Map();
const CHECKPOINTS = {
  get: async (k) => values.has(k) ? values.get(k).slice().buffer : null,
  put: async (k, v) => void values.set(k, new Uint8Array(v).slice()),
  delete: async (k) => void values.delete(k),
};
const env = { KUBE_SERVER: ${JSON.stringify(server.url)}, NAMESPACE: ${
      JSON.stringify(o.namespace)
    }, CHECKPOINTS };
addEventListener("fetch", (event) => event.respondWith(worker.fetch(event.request, env)));
`,
  );
  bundle(root, join(tmp, "edge_entry.js"), join(tmp, "edge.js"), "iife");
  const { EdgeRuntime } = await import(join(root, "node_modules/edge-runtime/dist/index.js"));
  const runtime = new EdgeRuntime({ initialCode: readFileSync(join(tmp, "edge.js"), "utf8") });
  const url = "http://edge.local/objects?labelSelector=app%3Dapp-1";
  const t = await timeRequests(o, server, async () => {
    const res = await runtime.dispatchFetch(url);
    await res.waitUntil();
    const body = await res.json();
    if (!res.ok) throw new Error(`edge-runtime answered ${res.status}: ${JSON.stringify(body)}`);
    return body;
  }, processCpuMs);
  return {
    runtime: `edge-runtime ${version} (in the bench's process)`,
    requests: o.requests,
    medianMs: t.medianMs,
    maxMs: t.maxMs,
    cpuMsPerRequest: t.cpuMs / o.requests,
    cpuHow:
      "the bench process's CPU time (process.cpuUsage) around each request ÷ requests: includes the test server's",
  };
}

/** Times the example on workerd and edge-runtime, whichever is installed; prints why one is skipped. */
export async function edgeRequests(o: EdgeOptions): Promise<EdgeTiming[]> {
  const root = repoRoot();
  if (!root) {
    console.error("edge: node_modules/.bin/esbuild not found: workerd and edge-runtime skipped");
    return [];
  }
  const example = [
    join(here, "../examples/edge_worker.js"),
    join(here, "../examples/edge_worker.ts"),
  ]
    .find(existsSync);
  if (!example) throw new Error(`examples/edge_worker not found next to ${here}`);
  const out: EdgeTiming[] = [];
  const runs: [string, string, typeof onWorkerd][] = [
    ["workerd", "node_modules/@cloudflare/workerd-linux-64/bin/workerd", onWorkerd],
    ["edge-runtime", "node_modules/edge-runtime/package.json", onEdgeRuntime],
  ];
  for (const [name, needs, run] of runs) {
    if (!existsSync(join(root, needs))) {
      console.error(`edge: ${needs} is missing: ${name} skipped`);
      continue;
    }
    const server = await FakeApiServer.start({ historySize: 1_000 });
    const tmp = mkdtempSync(join(tmpdir(), "edge-catch-up-bench-"));
    try {
      for (let i = 0; i < o.objects; i++) server.create(o.configMap(i));
      out.push(await run(o, root, tmp, example, server));
      console.error(`edge: ${name} done`);
    } catch (err) {
      console.error(`edge: ${name} failed: ${(err as Error).stack ?? err}`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      await server.close();
    }
  }
  return out;
}
