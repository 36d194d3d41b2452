/**
 * The demo itself: the embedded test API server with objects, churn and a
 * fault schedule; a reflector keeping an indexer in sync with it; a live
 * status; at the end, a catch-up, a summary and the check store = server.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { type Clock, systemClock, type TimerHandle } from "../async/clock.ts";
import type { Indexer } from "../cache/indexer.ts";
import { newNamespaceKeyedIndexerAndReflector } from "../reflector/namespace_keyed_indexer_and_reflector.ts";
import { FakeApiServer } from "../testkit/fake_api_server.ts";
import { KubeClient } from "../transport/kube_client.ts";
import { resourceListerWatcher } from "../transport/resource_lister_watcher.ts";
import type { CliEnv } from "./cli_env.ts";
import { Churn, demoNamespaces } from "./_demo_churn.ts";
import { compareStore, describeDifferences } from "./_demo_compare.ts";
import { DemoCounters } from "./_demo_counters.ts";
import { FaultSchedule } from "./_demo_faults.ts";
import type { DemoOptions } from "./_demo_options.ts";
import { seededRandom } from "./_demo_random.ts";
import {
  CLEAR_LINE,
  type DemoSnapshot,
  formatDuration,
  plainLine,
  statusLine,
  summaryLines,
} from "./_demo_report.ts";

/** Hooks for tests; the command uses none of them. */
export interface DemoInternals {
  /** Time for the churn, the faults, the status, the duration and the reflector. Default: the system clock. */
  clock?: Clock;
  /** How long the store may take to reach the server's version once the churn stops. Default: `15_000` ms. */
  catchUpTimeoutMs?: number;
  /** Called with the store after the reflector stopped, before the check (to sabotage it). */
  tamper?: (store: Indexer<KubeObject>) => void;
  /** Called with the test API server once it started. */
  server?: (server: FakeApiServer) => void;
}

/** Timings of the demo (not flags: they make a good show). */
export const DEMO_TIMINGS = {
  /** Churn ticks: the writes of each tick are spread by the rate. */
  churnTickMs: 50,
  /** Refresh of the terminal's status line (at most 5 a second). */
  statusMs: 200,
  /** A plain progress line without a terminal. */
  plainMs: 3_000,
  /** The reflector's idle deadline: a watch silent this long is presumed half-open (the server bookmarks every second). */
  idleTimeoutMs: 2_500,
  /** The server's bookmark period. */
  bookmarkMs: 1_000,
  catchUpTimeoutMs: 15_000,
  /** Polling for the catch-up. */
  catchUpPollMs: 50,
} as const;

/** Runs the demo with parsed options; resolves to the exit code (0: store = server, 1: not). */
export async function runDemo(
  env: CliEnv,
  options: DemoOptions,
  internals: DemoInternals = {},
): Promise<number> {
  const clock = internals.clock ?? systemClock;
  const catchUpTimeoutMs = internals.catchUpTimeoutMs ?? DEMO_TIMINGS.catchUpTimeoutMs;
  const server = await FakeApiServer.start({
    streamingList: true,
    bookmarkIntervalMs: DEMO_TIMINGS.bookmarkMs,
  });
  internals.server?.(server);
  const timers = new Set<TimerHandle>();
  const every = (ms: number, fn: () => void) => {
    const arm = () => {
      const handle = clock.setTimeout(() => {
        timers.delete(handle);
        fn();
        arm();
      }, ms);
      timers.add(handle);
    };
    arm();
  };
  const stopTimers = () => {
    for (const handle of timers) clock.clearTimeout(handle);
    timers.clear();
  };
  const ac = new AbortController();
  let running: Promise<void> | undefined;
  try {
    const namespaces = demoNamespaces(options.namespaces);
    const churn = new Churn(server, seededRandom(options.seed), namespaces, options.objects);
    churn.populate();
    const faults = new FaultSchedule(server, seededRandom(options.seed ^ 0x5bd1e995), clock);
    const counters = new DemoCounters(clock);
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const { indexer, reflector } = newNamespaceKeyedIndexerAndReflector(lw, {
      name: "configmaps",
      expectedKind: "ConfigMap",
      observer: counters.observer,
      onError: counters.onError,
      clock,
      random: seededRandom(options.seed ^ 0x27d4eb2f),
      idleTimeoutMs: DEMO_TIMINGS.idleTimeoutMs,
      // Faults every few seconds would keep client-go's backoff (800 ms to 30 s, reset after 2 minutes
      // of health) near its cap: shorter steps keep the show moving; the recovery logic is the same.
      backoff: { initialMs: 100, capMs: 500 },
      reconnectBackoff: { initialMs: 100, capMs: 500 },
    });

    // Output: a live line on a terminal (stderr if it is one, else stdout), plain lines otherwise.
    const live = env.stderrIsTerminal ? env.stderr : env.stdoutIsTerminal ? env.stdout : undefined;
    const width = Number(env.env("COLUMNS")) || 80; // the shell's width when it exports it
    const startedAt = clock.now();
    const snapshot = (): DemoSnapshot => ({
      elapsedMs: clock.now() - startedAt,
      objects: indexer.size,
      eventsPerSecond: counters.eventsPerSecond(),
      relists: counters.relistCount,
      reconnects: counters.reconnects,
      resourceVersion: reflector.lastSyncResourceVersion,
      sinceLastEventMs: counters.lastEventAt === undefined
        ? undefined
        : clock.now() - counters.lastEventAt,
      faults: faults.fired,
    });
    let lastLine = "";
    const redraw = () => {
      if (live) live(CLEAR_LINE + (lastLine = statusLine(snapshot(), width)));
    };
    const log = (text: string) => {
      if (live) live(CLEAR_LINE);
      env.stdout(`${text}\n`);
      if (live && lastLine) live(lastLine);
    };

    log(
      `kube-reflector demo: the embedded test API server on ${server.url}, ` +
        `${options.objects} ConfigMaps in ${options.namespaces} namespace(s), ` +
        `${options.rate} writes/s, ${
          options.faultEveryMs
            ? `a fault every ${formatDuration(options.faultEveryMs)}`
            : "no faults"
        }, ` +
        `seed ${options.seed}; ${
          options.durationMs === undefined
            ? "Ctrl-C to stop"
            : `for ${formatDuration(options.durationMs)}`
        }`,
    );
    running = reflector.run({ signal: ac.signal });
    if (live) every(DEMO_TIMINGS.statusMs, redraw);
    else every(DEMO_TIMINGS.plainMs, () => env.stdout(plainLine(snapshot())));

    const interrupted = untilAborted(env.signal);
    try {
      if (await Promise.race([reflector.synced.then(() => true), interrupted.promise])) {
        log(
          `synced ${indexer.size} objects at resourceVersion ${reflector.lastSyncResourceVersion} ` +
            `in ${formatDuration(clock.now() - startedAt)}; churn and faults start`,
        );
        // The run: churn, faults, until the duration or Ctrl-C.
        const churnStart = clock.now();
        let ticks = 0;
        let writes = 0;
        every(DEMO_TIMINGS.churnTickMs, () => {
          ticks++;
          const due = Math.floor((options.rate * ticks * DEMO_TIMINGS.churnTickMs) / 1_000);
          churn.step(due - writes);
          writes = due;
        });
        if (options.faultEveryMs > 0) {
          every(options.faultEveryMs, () => log(`fault: ${faults.injectNext()}`));
        }
        let endTimer: TimerHandle | undefined;
        const ended = options.durationMs === undefined
          ? new Promise<void>(() => {})
          : new Promise<void>((resolve) => {
            endTimer = clock.setTimeout(resolve, options.durationMs! - (clock.now() - churnStart));
          });
        await Promise.race([ended, interrupted.promise]);
        clock.clearTimeout(endTimer);
      }
    } finally {
      interrupted.dispose();
    }

    // The end: churn and faults stop, the store catches up, the check.
    stopTimers();
    await faults.stop();
    const elapsedMs = clock.now() - startedAt;
    log(
      `${env.signal.aborted ? "interrupted" : "time is up"}: churn and faults stop; ` +
        `waiting for the store to reach resourceVersion ${server.resourceVersion}`,
    );
    if (live) every(DEMO_TIMINGS.statusMs, redraw);
    const caughtUp = await catchUp(
      clock,
      () => Number(reflector.lastSyncResourceVersion) >= Number(server.resourceVersion),
      catchUpTimeoutMs,
    );
    stopTimers();
    ac.abort();
    await running;
    running = undefined;
    if (live) live(CLEAR_LINE);
    internals.tamper?.(indexer);

    const onServer = server.objects({ resource: "configmaps" });
    const comparison = compareStore(indexer.list(), onServer);
    for (
      const line of summaryLines({
        elapsedMs,
        seed: options.seed,
        writes: { ...churn.done },
        events: { ...counters.byType },
        lists: counters.relists,
        reconnects: counters.reconnects,
        faults: faults.firedByKind(),
        errors: counters.errors,
        serverObjects: onServer.length,
        serverResourceVersion: server.resourceVersion,
        storeObjects: indexer.size,
        storeResourceVersion: reflector.lastSyncResourceVersion,
        caughtUp,
      })
    ) env.stdout(line);
    if (comparison.equal) {
      env.stdout(
        `check: store = server (${comparison.storeCount} objects, each at the server's resourceVersion)\n`,
      );
      return 0;
    }
    env.stdout("check: FAILED, the store differs from the server\n");
    for (const line of describeDifferences(comparison)) env.stderr(`${line}\n`);
    return 1;
  } finally {
    stopTimers();
    ac.abort();
    await running;
    await server.close();
  }
}

/** A promise that resolves to `false` when `signal` aborts; `dispose` removes the listener. */
function untilAborted(signal: AbortSignal): { promise: Promise<false>; dispose: () => void } {
  let onAbort = () => {};
  const promise = new Promise<false>((resolve) => {
    onAbort = () => resolve(false);
    if (signal.aborted) resolve(false);
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/** Polls `done` on the clock until it holds (true) or `timeoutMs` passed (false). */
function catchUp(clock: Clock, done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = clock.now() + timeoutMs;
  return new Promise((resolve) => {
    const check = () => {
      if (done()) resolve(true);
      else if (clock.now() >= deadline) resolve(false);
      else clock.setTimeout(check, DEMO_TIMINGS.catchUpPollMs);
    };
    check();
  });
}
