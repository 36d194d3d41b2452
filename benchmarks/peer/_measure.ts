/**
 * Measurement helpers shared by the peer benchmark's contender processes
 * (`contender_*.ts`): forced GC, heap and RSS readings (the RSS high-water
 * mark can be reset on Linux, so a phase's own peak can be read), a heap
 * sampler, percentiles, the server's control endpoints, and the result line
 * the harness (`scripts/bench_peer.mjs`) reads. Imports nothing from the
 * library, so the baseline and the peer load none of it.
 *
 * @module
 */
import process from "node:process";
import { readFileSync, writeFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
import { constants, PerformanceObserver } from "node:perf_hooks";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/** Epoch milliseconds with sub-millisecond resolution (comparable across processes on one machine). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Runs a full GC several times (weak maps, finalizers), if `--expose-gc` was given. */
export function fullGc(): void {
  if (typeof g.gc !== "function") return;
  for (let i = 0; i < 4; i++) g.gc();
}

/** Heap in use after a full GC, in bytes. */
export function heapAfterGc(): number {
  fullGc();
  return process.memoryUsage().heapUsed;
}

/** Heap in use now, garbage included (no GC), in bytes. */
export function heapNow(): number {
  return process.memoryUsage().heapUsed;
}

/** Resident set size now, in bytes. */
export function rssNow(): number {
  return process.memoryUsage.rss();
}

/**
 * Resets the RSS high-water mark (Linux: `/proc/self/clear_refs` = 5), so
 * {@linkcode peakRss} reads the peak of what follows. False where it cannot.
 */
export function resetPeakRss(): boolean {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

/** The RSS high-water mark in bytes (VmHWM; else the process's lifetime maximum). */
export function peakRss(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch { /* not Linux */ }
  return process.resourceUsage().maxRSS * 1024;
}

/** How many read system calls the process has made (`syscr` of /proc/self/io), if Linux says. */
function readSyscalls(): number | undefined {
  try {
    const m = /syscr:\s+(\d+)/.exec(readFileSync("/proc/self/io", "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined; // not Linux
  }
}

/** What the process did over a window, besides running JavaScript. */
export interface SystemCounters {
  /** Minor page faults: fresh memory touched for the first time. */
  pageFaults: number;
  /** Read system calls (sockets included), where /proc/self/io exists. */
  reads?: number;
  /** Collections of the young generation (scavenges). */
  minorGcs: number;
  /** Full collections of the heap (mark-compact), incremental marking included. */
  majorGcs: number;
  /** Time of every collection, in ms (as V8 reports it: main-thread pauses). */
  gcMs: number;
}

/**
 * Starts counting page faults, read calls and garbage collections; `stop()`
 * ends the window and resolves with the counts (after the GC entries of the
 * window have been delivered).
 */
export function systemCounters(): { stop(): Promise<SystemCounters> } {
  const kinds = { minor: 0, major: 0 };
  let gcMs = 0;
  let stoppedAt = Infinity;
  // Only collections that started inside the window count: the entries
  // arrive asynchronously, some after stop() has been called.
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.startTime > stoppedAt) continue;
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) kinds.minor++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) kinds.major++;
      gcMs += entry.duration;
    }
  });
  observer.observe({ entryTypes: ["gc"] }); // (entries exist only while observed)
  const usage0 = process.resourceUsage();
  const reads0 = readSyscalls();
  return {
    async stop() {
      stoppedAt = performance.now();
      const usage = process.resourceUsage();
      const reads = readSyscalls();
      await new Promise((resolve) => setTimeout(resolve, 10)); // let the window's entries arrive
      observer.disconnect();
      return {
        pageFaults: usage.minorPageFault - usage0.minorPageFault,
        reads: reads !== undefined && reads0 !== undefined ? reads - reads0 : undefined,
        minorGcs: kinds.minor,
        majorGcs: kinds.major,
        gcMs,
      };
    },
  };
}

/** `counters` per 1,000 events, named as the results record them. */
export function perThousand(counters: SystemCounters, events: number): Record<string, number> {
  const k = 1000 / events;
  const out: Record<string, number> = {
    pageFaultsPerKEvent: counters.pageFaults * k,
    minorGcsPerKEvent: counters.minorGcs * k,
    majorGcs: counters.majorGcs,
    gcUsPerEvent: (counters.gcMs * 1000) / events,
  };
  if (counters.reads !== undefined) out.readsPerKEvent = counters.reads * k;
  return out;
}

/** Objects kept alive for the life of the process by {@linkcode padHeap}. */
const ballast: unknown[] = [];

/**
 * Grows the heap in use after a full GC to at least `mib` MiB (and about no
 * more) with small objects kept for the life of the process, so that
 * contenders whose own code takes different amounts of heap run with the same
 * heap. V8 schedules its full collections by the heap that survived the last
 * one, so with their own heaps a contender that loads 30 MB of code collects
 * on other terms than one that loads 9 MB, whatever each does per event.
 * Needs `--expose-gc`; `mib` is 0 to 1024.
 */
export function padHeap(mib: number): void {
  if (!(mib >= 0 && mib <= 1024)) throw new Error(`--heap-mib: ${mib} is not 0 to 1024`);
  if (!g.gc) throw new Error("--heap-mib needs node --expose-gc");
  const target = mib * 2 ** 20;
  for (;;) {
    g.gc(); // the ballast array's outgrown backing stores are garbage: count only what lives
    const missing = target - process.memoryUsage().heapUsed;
    if (missing <= 0) return;
    // An entry takes about 100 bytes: add what is missing at 200 each, so the
    // heap approaches the target from below and stops within one round's last entries.
    for (let i = Math.ceil(missing / 200); i > 0; i--) {
      ballast.push({ n: i, s: `pad ${i}`, a: [i] });
    }
  }
}

/**
 * The heap in use outside V8's young generation, in bytes: what survived at
 * least one scavenge (held objects, and garbage promoted before it died),
 * without the short-lived garbage in the nursery, whose size V8 adapts at
 * run time (on Node 24 it grows to tens of MiB while objects die young).
 */
export function heapOutsideYoung(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name !== "new_space" && space.space_name !== "new_large_object_space") {
      used += space.space_used_size;
    }
  }
  return used;
}

/** Samples heap and RSS every `everyMs` until stopped; keeps the maxima. */
export class Sampler {
  maxHeap = 0;
  maxRss = 0;
  /** The highest {@linkcode heapOutsideYoung} seen. */
  maxOld = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  start(everyMs = 2): this {
    this.sample();
    this.#timer = setInterval(() => this.sample(), everyMs);
    return this;
  }
  sample(): void {
    const m = process.memoryUsage();
    if (m.heapUsed > this.maxHeap) this.maxHeap = m.heapUsed;
    if (m.rss > this.maxRss) this.maxRss = m.rss;
    const old = heapOutsideYoung();
    if (old > this.maxOld) this.maxOld = old;
  }
  stop(): this {
    clearInterval(this.#timer);
    this.sample();
    return this;
  }
}

/** The `q` quantile (0..1) of `values` (sorted in place). */
export function quantile(values: Float64Array | number[], q: number): number {
  if (values.length === 0) return NaN;
  values.sort((a, b) => a - b);
  const i = Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1));
  return values[i];
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `done` every `everyMs` (calling `tick` each turn) until it is true;
 * throws after `timeoutMs`.
 */
export async function until(
  done: () => boolean,
  what: string,
  { timeoutMs = 120_000, everyMs = 1, tick }: {
    timeoutMs?: number;
    everyMs?: number;
    tick?: () => void;
  } = {},
): Promise<void> {
  const t0 = Date.now();
  while (!done()) {
    tick?.();
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(everyMs);
  }
}

/** Calls a control endpoint of the benchmark API server (`_server.ts`) and returns its JSON answer. */
export async function control(
  server: string,
  name: string,
  params: Record<string, string | number> = {},
): Promise<Record<string, number>> {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${server}/bench/${name}?${qs}`, { method: "POST" });
  const text = await res.text();
  if (!res.ok) throw new Error(`control ${name}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** The command line of a contender: `--key value` pairs. */
export function parseArgs(argv: string[] = process.argv.slice(2)): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith("--")) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) out[argv[i].slice(2)] = "true";
      else out[argv[i].slice(2)] = argv[++i];
    }
  }
  return out;
}

/** Prints the result line the harness reads, then exits (handles and sockets may still be open). */
export function report(result: Record<string, unknown>): void {
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => process.exit(0));
}
