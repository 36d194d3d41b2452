/**
 * The workloads of the peer benchmark, run the same way for every
 * contender. A contender process (`contender_*.ts`) builds a
 * {@linkcode Subject} (our reflector, our informer, client-node's informer,
 * or the plain baseline) and hands it to {@linkcode runContender}, which
 * reads the command line, runs one workload against the server at
 * `--server` (already reset by the harness) and prints one `RESULT` line.
 *
 * Workloads (`--workload`):
 * - `sync`: time from start to synced, heap after GC (minus the heap before
 *   start), peak RSS (high-water mark, reset just before start);
 * - `throughput`: after `--warmup` events (default 0; not reported),
 *   `--events` MODIFIED events written as fast as the contender reads
 *   them; handler calls per second until the handler has seen the last one;
 * - `latency`: after `--warmup` events as fast as possible (not reported),
 *   MODIFIED events at each rate of `--rates` for `--step-ms`;
 *   event-to-handler latency (emission time in the server to handler call)
 *   p50/p99/max, and whether the contender kept up (p99 ≤ `--keep-up-ms`);
 *   stops after the first rate it does not keep up with;
 * - `relist`: after sync, a forced 410 on the watch: time until the store
 *   holds the relisted objects, peak heap (sampled every ms, garbage
 *   included) and peak RSS meanwhile, against the steady store;
 * - `side-by-side`: every contender at once on the same events (the harness
 *   starts them all, waits for each to print `READY`, then has the server
 *   write `--warmup` + `--events` MODIFIED events after version
 *   `--from-rv` to every watch, as fast as the slowest reads them); each
 *   reports its own CPU time per event over the `--events` after the
 *   warm-up (user and system apart), with the page faults, read calls and
 *   garbage collections of that window. The machine's noise then falls on
 *   every contender alike, so the per-run ratio to the baseline is steadier
 *   than events/s.
 *
 * `--heap-mib N` (any workload) first pads the contender's heap to N MiB in
 * use, so that contenders whose code takes more or less heap collect garbage
 * on the same terms.
 *
 * Every contender makes one request before its baseline heap is read, so
 * that loading Node's `fetch` on first use is in no contender's figures.
 *
 * @module
 */
import {
  control,
  epochMs,
  heapAfterGc,
  heapOutsideYoung,
  padHeap,
  parseArgs,
  peakRss,
  perThousand,
  quantile,
  report,
  resetPeakRss,
  rssNow,
  Sampler,
  sleep,
  systemCounters,
  until,
} from "./_measure.ts";
import { nameOf, SENT_ANNOTATION } from "./_objects.ts";
import process from "node:process";

/** The part of an object the driver reads. */
export interface BenchObject {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    annotations?: Record<string, string> | { [key: string]: string };
  };
}

/** What a contender gives the driver. */
export interface Subject {
  /** Starts; resolves when synced (the cache is complete and any handler has seen every object). */
  start(): Promise<void>;
  /** Objects in the cache. */
  size(): number;
  /** resourceVersion of the cached object, if any. */
  resourceVersion(namespace: string, name: string): string | undefined;
}

/** What the driver gives a contender. */
export interface SubjectContext {
  server: string;
  /** `configmaps` or `pods`. */
  resource: string;
  /** Objects the server holds (a contender with handlers waits for this many adds). */
  objects: number;
  /** Options of the contender (`--mode`, `--transform`, ...). */
  args: Record<string, string>;
  /** To be called by the update handler for every MODIFIED event. */
  onModified(obj: BenchObject): void;
}

/** Runs the workload named on the command line with the subject `make` builds, and reports. */
export async function runContender(
  contender: string,
  make: (ctx: SubjectContext) => Subject | Promise<Subject>,
): Promise<void> {
  const args = parseArgs();
  const server = args.server;
  const workload = args.workload ?? "sync";
  const resource = args.resource ?? "configmaps";
  const objects = Number(args.objects ?? 1000);

  // Handler state: calls, latencies of the current step, the version that ends it.
  let calls = 0;
  let latencies: Float64Array | undefined;
  let target = Infinity;
  let maxSeen = 0;
  let tLast = 0;
  let onLast: (() => void) | undefined;
  const onModified = (obj: BenchObject) => {
    const n = calls++;
    const meta = obj.metadata!;
    if (latencies !== undefined && n < latencies.length) {
      latencies[n] = epochMs() -
        Number((meta.annotations as Record<string, string>)[SENT_ANNOTATION]);
    }
    const rv = Number(meta.resourceVersion);
    if (rv > maxSeen) {
      maxSeen = rv;
      if (rv >= target) {
        tLast = epochMs();
        onLast?.();
      }
    }
  };
  /** Writes `count` events at `rate` and resolves when the handler saw the last one. */
  const modify = async (count: number, rate: number, timeoutMs: number) => {
    calls = 0;
    target = Infinity;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = new Promise<void>((resolve, reject) => {
      onLast = resolve;
      timer = setTimeout(
        () =>
          reject(
            new Error(`handler did not see the last of ${count} events within ${timeoutMs} ms`),
          ),
        timeoutMs,
      );
    });
    const t0 = epochMs();
    // --marks: the timed window in the monotonic clock a --cpu-prof profile
    // uses (µs), so that scripts/profile_window.mjs can cut the profile to it
    if (args.marks) console.error(`MARK0 ${process.hrtime.bigint() / 1000n}`);
    const cpu0 = process.cpuUsage();
    const sys0 = systemCounters();
    const { fromResourceVersion } = await control(server, "modify", { count, rate });
    target = fromResourceVersion + count - 1;
    if (maxSeen >= target) { // (the last event came before the answer)
      tLast = epochMs();
      onLast?.();
    }
    await seen;
    clearTimeout(timer);
    onLast = undefined;
    const cpu = process.cpuUsage(cpu0);
    if (args.marks) console.error(`MARK1 ${process.hrtime.bigint() / 1000n}`);
    const system = await sys0.stop();
    return { t0, ms: tLast - t0, calls, cpu, system };
  };

  const ctx: SubjectContext = { server, resource, objects, args, onModified };
  // --heap-mib: every contender starts from the same heap in use (see padHeap)
  if (args["heap-mib"] !== undefined) padHeap(Number(args["heap-mib"]));
  const subject = await make(ctx);
  // One request first, so that no contender's time includes loading Node's
  // fetch (undici) on first use; its heap is then part of every baseline.
  await control(server, "stats");
  const h0 = heapAfterGc();
  const h0Old = heapOutsideYoung(); // the young generation is empty after a full GC
  const rss0 = rssNow();
  const base = {
    contender,
    workload,
    resource,
    objects,
    heapBeforeBytes: h0,
    rssBeforeBytes: rss0,
  };

  if (workload === "sync") {
    resetPeakRss();
    const t0 = epochMs();
    await subject.start();
    const syncMs = epochMs() - t0;
    const peak = peakRss();
    const heapBytes = heapAfterGc() - h0;
    if (subject.size() !== objects) {
      throw new Error(`synced ${subject.size()} of ${objects} objects`);
    }
    return report({ ...base, syncMs, heapBytes, peakRssBytes: peak, rssAfterBytes: rssNow() });
  }

  if (workload === "throughput") {
    const events = Number(args.events ?? 50_000);
    const warmup = Number(args.warmup ?? 0);
    await subject.start();
    await sleep(300);
    // JIT and buffer warm-up, as in `latency`: a long-running watch is measured, not its first second
    if (warmup > 0) await modify(warmup, 0, 600_000);
    await sleep(200);
    resetPeakRss();
    const r = await modify(events, 0, 600_000);
    return report({
      ...base,
      events,
      handlerCalls: r.calls,
      ms: r.ms,
      eventsPerSec: (events / r.ms) * 1000,
      cpuUsPerEvent: (r.cpu.user + r.cpu.system) / events,
      userUsPerEvent: r.cpu.user / events,
      systemUsPerEvent: r.cpu.system / events,
      ...perThousand(r.system, events),
      peakRssBytes: peakRss(),
      heapBytes: heapAfterGc() - h0,
    });
  }

  if (workload === "side-by-side") {
    const events = Number(args.events ?? 200_000);
    const warmup = Number(args.warmup ?? 20_000);
    const from = Number(args["from-rv"]);
    if (!Number.isInteger(from) || from < 0 || !(events > 0) || !(warmup >= 0)) {
      throw new Error("side-by-side needs --from-rv (the server's version), --events, --warmup");
    }
    await subject.start();
    await sleep(300); // the watch is open (the harness also has the server wait for every watch)
    let timer: ReturnType<typeof setTimeout> | undefined;
    const reach = (rv: number) =>
      new Promise<void>((resolve, reject) => {
        target = rv;
        if (maxSeen >= rv) return resolve();
        onLast = resolve;
        timer = setTimeout(() => reject(new Error(`handler did not see version ${rv}`)), 600_000);
      }).finally(() => clearTimeout(timer));
    const warmedUp = reach(from + warmup); // resolves inside the handler call of its last event
    process.stdout.write("READY\n");
    await warmedUp;
    // Events of the same read may have been handled before this runs: count from here.
    const cpu0 = process.cpuUsage();
    const sys0 = systemCounters();
    const t0 = epochMs();
    const seenAtStart = maxSeen;
    const callsAtStart = calls;
    await reach(from + warmup + events);
    const cpu = process.cpuUsage(cpu0);
    const sys1 = await sys0.stop();
    const ms = tLast - t0;
    const counted = from + warmup + events - seenAtStart;
    // Every version in the window must have reached the handler once: a
    // watch that reconnected would skip events (the server keeps no history)
    // and make CPU per event look lower.
    const handlerCalls = calls - callsAtStart;
    if (handlerCalls !== counted) {
      throw new Error(`the handler saw ${handlerCalls} of the ${counted} events of the window`);
    }
    return report({
      ...base,
      events: counted,
      handlerCalls,
      ms,
      eventsPerSec: (counted / ms) * 1000,
      cpuUsPerEvent: (cpu.user + cpu.system) / counted,
      userUsPerEvent: cpu.user / counted,
      systemUsPerEvent: cpu.system / counted,
      ...perThousand(sys1, counted),
      heapBytes: heapAfterGc() - h0,
    });
  }

  if (workload === "latency") {
    const rates = (args.rates ?? "1000,2000,5000,10000,20000,40000").split(",").map(Number);
    const stepMs = Number(args["step-ms"] ?? 2000);
    const keepUpMs = Number(args["keep-up-ms"] ?? 100);
    const warmup = Number(args.warmup ?? 10_000);
    await subject.start();
    await sleep(300);
    if (warmup > 0) await modify(warmup, 0, 600_000); // JIT and heap warm-up, not reported
    await sleep(200);
    const steps = [];
    let maxRate = 0;
    for (const rate of rates) {
      const count = Math.max(1, Math.round((rate * stepMs) / 1000));
      latencies = new Float64Array(count);
      const r = await modify(count, rate, stepMs * 40 + 60_000);
      const got = latencies.subarray(0, Math.min(r.calls, count));
      const p50 = quantile(got, 0.5);
      const p99 = quantile(got, 0.99);
      const max = got.length ? got[got.length - 1] : NaN;
      const keptUp = p99 <= keepUpMs;
      steps.push({
        rate,
        count,
        calls: r.calls,
        deliveredPerSec: (count / r.ms) * 1000,
        p50,
        p99,
        max,
        keptUp,
      });
      if (keptUp) maxRate = rate;
      else break; // falling behind: higher rates only build a longer backlog
      latencies = undefined;
      await sleep(200);
    }
    return report({ ...base, stepMs, keepUpMs, steps, maxRate });
  }

  if (workload === "relist") {
    await subject.start();
    // The watch must have lived past the reflector's shortWatchMs (1 s) for a
    // 410 to relist at once, as it would on any long-running watch.
    await sleep(1500);
    const steadyHeapBytes = heapAfterGc() - h0;
    const steadyRssBytes = rssNow();
    const { namespace, name } = nameOf(resource, 0);
    resetPeakRss();
    const sampler = new Sampler().start(1);
    const t0 = epochMs();
    const { markerRv } = await control(server, "expire");
    const marker = String(markerRv);
    await until(() => subject.resourceVersion(namespace, name) === marker, "relist", {
      everyMs: 1,
      timeoutMs: 300_000,
    });
    const resyncMs = epochMs() - t0;
    sampler.stop();
    const peak = peakRss();
    if (subject.size() !== objects) {
      throw new Error(`relisted ${subject.size()} of ${objects} objects`);
    }
    return report({
      ...base,
      resyncMs,
      steadyHeapBytes,
      steadyRssBytes,
      peakHeapBytes: sampler.maxHeap - h0,
      peakOldHeapBytes: sampler.maxOld - h0Old,
      peakRssBytes: peak,
      afterHeapBytes: heapAfterGc() - h0,
    });
  }
  throw new Error(`unknown workload ${workload}`);
}
