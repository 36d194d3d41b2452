import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { ListTimeoutError, StreamingListUnsupportedError } from "../api/errors.ts";
import type { KubeObject, KubeObjectLike, WatchEvent } from "../api/types.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { childAbortController, delay, unit } from "../async/_async.ts";
import { ConsumerFailure } from "./_failure_kind.ts";
import { IdleDeadline, withIdleDeadline } from "./_idle_deadline.ts";
import { heldItem, performList, report } from "./_perform_list.ts";
import { ServerKnowledge } from "./_server_knowledge.ts";
import { accept, close, open, type WatchPhase } from "./_watch_session.ts";
import {
  initialState,
  type MachineLimits,
  type MachineState,
  next,
  type Outcome,
  type WaitKind,
} from "./_watch_machine.ts";
import { type ResolvedWatcherOptions, resolveWatcherOptions } from "./_resolve_watcher_options.ts";
import type { WatcherOptions } from "./watcher_options.ts";

export type { WatcherEvent } from "./watcher_event.ts";
import type { WatcherEvent } from "./watcher_event.ts";

/**
 * The reflector's state machine without a store: list (or streaming list),
 * then watch from the list's resourceVersion, forever. The recovery rules
 * (when to rewatch, when to relist, how long to wait) are one pure
 * transition function (`_watch_machine.ts`); this generator performs a
 * phase, asks that function what comes next, waits, and yields events.
 * Errors go to `onError`, never out of the generator: not a malformed
 * answer, not a `ListerWatcher` that throws, not a bug of ours. Only
 * aborting `signal` ends it (the loop ends quietly: the library's one abort
 * rule, see {@linkcode Reflector}), or the consumer leaving the loop.
 *
 * @example A snapshot, then the changes after it
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, resourceListerWatcher, watcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * const a = {
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "default" },
 * };
 * server.create(a);
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const seen: string[] = [];
 * for await (const ev of watcher(lw, { expectedKind: "ConfigMap" })) {
 *   if (ev.type === "LIST") {
 *     seen.push(`LIST ${ev.items.length}`);
 *     server.delete(a);
 *   } else if (ev.type !== "BOOKMARK") {
 *     seen.push(`${ev.type} ${ev.object.metadata.name}`);
 *     break; // leaving the loop stops the watcher and closes its watch
 *   }
 * }
 * assert.deepEqual(seen, ["LIST 1", "DELETED a"]);
 * await server.close();
 * ```
 */
export async function* watcher<T extends KubeObjectLike = KubeObject>(
  lw: ListerWatcher<T>,
  options: WatcherOptions = {},
): AsyncGenerator<WatcherEvent<T>, void, undefined> {
  // a plain loop: about half the cost of `yield*` over an array
  for await (const batch of watcherBatches(lw, options)) {
    for (const ev of batch) yield ev;
  }
}

/**
 * {@linkcode watcher}, its events in arrays: the events that arrived in one
 * network read come out together (a `LIST` is in an array of its own, or
 * first among the events that followed it in its read). A consumer that
 * applies a whole array synchronously pays the per-step cost of an async
 * iterator once per read rather than once per event: the `Reflector` and
 * the `Informer` consume it. Same options, rules and ending as `watcher`.
 */
export async function* watcherBatches<T extends KubeObjectLike = KubeObject>(
  lw: ListerWatcher<T>,
  options: WatcherOptions = {},
): AsyncGenerator<WatcherEvent<T>[], void, undefined> {
  yield* watchResolved(lw, resolveWatcherOptions(options));
}

/**
 * The watcher's loop over resolved options (the `Reflector` and `catchUp`
 * resolve theirs once): perform the phase, ask the recovery rules what
 * comes next, wait, repeat. `next` is called here and nowhere else.
 */
export async function* watchResolved<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
): AsyncGenerator<WatcherEvent<T>[], void, undefined> {
  const { signal, clock, observer } = o;
  const limits: MachineLimits = {
    shortWatchMs: o.shortWatchMs,
    streamingListAttempts: o.streamingListAttempts,
  };
  const knowledge = new ServerKnowledge(lw.features);
  // A server already known (in this process) to refuse streaming lists is not asked again.
  let state: MachineState = initialState(
    o.initialResourceVersion,
    o.useStreamingList && !knowledge.refusesStreaming,
    o.resumeResourceVersion,
    o.consistentFirstList,
  );
  if (!o.resumeResourceVersion) observer.relist?.("initial");
  while (true) {
    if (signal?.aborted) return; // the one abort rule: a loop ends quietly on its own signal
    let done: Performed;
    try {
      done = yield* perform(lw, o, state.phase, knowledge);
    } catch (err) {
      // Anything thrown while performing a phase that it did not turn into
      // an outcome: an abort, or a bug (ours or a broken ListerWatcher).
      if (signal?.aborted) return;
      report(o, err, state.phase.kind === "list" ? "list" : "watch");
      done = { outcome: failed("bug", state.phase.rv) };
    }
    const t = next(state, done.outcome, limits);
    state = t.state;
    if (t.relist) observer.relist?.(t.relist);
    const ms = waitMs(o, t.wait, done.retryAfterMs);
    if (ms > 0) {
      observer.state?.({ state: "waiting", waitMs: ms });
      try {
        await delay(ms, signal, clock);
      } catch {
        return; // aborted while waiting
      }
    }
  }
}

/** What came of performing a phase. */
interface Performed {
  outcome: Outcome;
  /** A `Retry-After` the server sent with the failure, in ms (validated, not yet capped). */
  retryAfterMs?: number;
}

function failed(failure: "bug" | "bad-data", rv: string): Outcome {
  return { kind: "failed", failure, rv, events: 0, durationMs: 0 };
}

/** The wait in ms for a wait kind: backoff schedules, with `Retry-After` capped by `maxRetryAfterMs`. */
export function waitMs(
  o: ResolvedWatcherOptions,
  wait: WaitKind,
  retryAfterMs: number | undefined,
): number {
  if (wait === "none") return 0;
  const base = wait === "reconnect" ? o.reconnectBackoff.next() : o.backoff.next();
  const asked = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs > 0
    ? Math.min(retryAfterMs, o.maxRetryAfterMs)
    : 0;
  return Math.max(base, asked);
}

/** Performs `phase`, yields what the consumer must apply, returns what came of it. */
async function* perform<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  phase: MachineState["phase"],
  knowledge: ServerKnowledge,
): AsyncGenerator<WatcherEvent<T>[], Performed, undefined> {
  if (phase.kind !== "list") return yield* performWatch(lw, o, phase, knowledge);
  const listed = await performList(lw, o, phase.rv);
  if (listed.items === undefined) return listed;
  try {
    yield [{ type: "LIST", items: listed.items, resourceVersion: listed.outcome.rv }];
  } catch (err) {
    if (!(err instanceof ConsumerFailure)) throw err;
    return { outcome: failed("bad-data", phase.rv) }; // the consumer could not apply it
  }
  return listed;
}

/**
 * One watch request (a streaming list first collects its initial events
 * into a keyed pending snapshot, then goes on as a watch): opens the
 * request under the idle deadline, folds each read into the session
 * (`_watch_session.ts`), hands on what it says, and returns the outcome
 * the session closes with.
 */
async function* performWatch<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  phase: WatchPhase,
  knowledge: ServerKnowledge,
): AsyncGenerator<WatcherEvent<T>[], Performed, undefined> {
  const { signal, clock, observer } = o;
  const streaming = phase.kind === "stream";
  const timeoutSeconds = o.watchTimeoutSeconds ?? Math.max(
    1,
    Math.floor((o.minWatchTimeoutMs / 1000) * (1 + unit(o.random()))),
  );
  const deadline = new IdleDeadline(
    knowledge,
    o.idleTimeoutMs,
    timeoutSeconds * 1000 + o.idleGraceMs,
  );
  const { controller, dispose } = childAbortController(signal);
  let session = open<T>(phase, clock.now());
  /** The last version the consumer has applied (the session runs ahead of it while the consumer holds events). */
  let applied = phase.rv;
  let error: unknown;
  // A streaming list is bounded like a list: its end bookmark must come within listTimeoutMs.
  let listDeadline = streaming
    ? clock.setTimeout(
      () => controller.abort(new ListTimeoutError(o.listTimeoutMs)),
      o.listTimeoutMs,
    )
    : undefined;
  // "watching" (the consumer is current) once the watch has proven itself:
  // progress on the watch proper, or open for shortWatchMs after the server
  // accepted it. A watch accepted and closed at once never counts.
  let proven = false;
  let proveTimer: unknown;
  const prove = () => {
    if (proven) return;
    clock.clearTimeout(proveTimer);
    if (session.pending) return;
    proven = true;
    observer.state?.({ state: "watching" });
  };
  const accepted = () => {
    if (proveTimer === undefined && !proven) proveTimer = clock.setTimeout(prove, o.shortWatchMs);
  };
  const ctx = {
    expectedKind: o.expectedKind,
    timeoutMs: timeoutSeconds * 1000,
    reuse: o.reuseListed ? (item: T) => heldItem<T>(o.reuseListed!(item), o) : undefined,
  };
  observer.watchStart?.();
  observer.state?.({ state: streaming ? "listing" : "connecting" });
  try {
    const stream = watchBatchIterable(lw, {
      resourceVersion: phase.rv,
      timeoutSeconds,
      allowWatchBookmarks: true,
      sendInitialEvents: streaming || undefined,
      resourceVersionMatch: streaming ? "NotOlderThan" : undefined,
      signal: controller.signal,
      onConnected: accepted,
    });
    const idleMs = () => deadline.ms(session.established);
    const why = () => deadline.why(session.established);
    for await (
      const batch of withIdleDeadline(stream, idleMs, clock, controller, deadline.adaptive, why)
    ) {
      if (!Array.isArray(batch)) {
        throw new MalformedResponseError("lister-watcher", "watchBatches() yielded a non-array");
      }
      accepted();
      const a = accept(session, batch, clock.now(), ctx);
      session = a.session;
      if (observer.event) observe(observer.event, batch, a.seen);
      for (const problem of a.reports) report(o, problem, "event");
      if (a.synced) {
        clock.clearTimeout(listDeadline);
        listDeadline = undefined;
        observer.listDone?.({ ...a.synced, resourceVersion: a.rv });
        knowledge.streamed();
      }
      if (a.bookmarkGapMs !== undefined && knowledge.sawBookmarkGap(a.bookmarkGapMs)) {
        void readServerVersion(lw, o); // the learnt deadline's message names the server's version
      }
      if (a.progressed) prove();
      if (a.events.length > 0) {
        try {
          yield a.events;
        } catch (err) {
          // A consumer that failed in the middle says how far it got.
          if (err instanceof ConsumerFailure && err.appliedResourceVersion) {
            applied = err.appliedResourceVersion;
          }
          throw err;
        }
        applied = a.rv;
      }
      if (a.stop) throw a.stop;
    }
    // A stream that ends quietly when its request is aborted (the idle
    // deadline, the streaming-list deadline) has failed, not ended.
    controller.signal.throwIfAborted();
  } catch (caught) {
    if (signal?.aborted) throw signal.reason;
    error = controller.signal.aborted ? controller.signal.reason : caught;
  } finally {
    clock.clearTimeout(listDeadline);
    clock.clearTimeout(proveTimer);
    dispose();
  }
  const closed = close(session, { error, applied }, clock.now(), { shortWatchMs: o.shortWatchMs });
  deadline.fired(error, session.established);
  observer.watchEnd?.({
    durationMs: closed.durationMs,
    events: closed.events,
    error: error ?? closed.report,
    short: closed.short,
  });
  let problem = closed.report;
  if (closed.failure === "unsupported") {
    // Giving up streaming lists is reported once per server (watchers that
    // started together are all refused), with the server's version.
    if (!knowledge.refusedStreaming()) problem = undefined;
    else {
      if (knowledge.version === undefined) await readServerVersion(lw, o);
      problem = new StreamingListUnsupportedError(knowledge.version, error);
    }
  }
  // The consumer reports its own failures (a store that could not apply an event).
  if (problem !== undefined && !(error instanceof ConsumerFailure)) {
    report(o, problem, closed.reportPhase);
  }
  return { outcome: closed.outcome, retryAfterMs: closed.retryAfterMs };
}

/** Tells the observer of each valid event of a batch (also a streaming list's initial events). */
function observe(
  event: NonNullable<ResolvedWatcherOptions["observer"]["event"]>,
  batch: readonly unknown[],
  seen: number,
): void {
  for (let i = 0, n = 0; n < seen && i < batch.length; i++) {
    const ev = batch[i] as WatchEvent<KubeObjectLike>; // before `seen`, every one is valid
    event(ev.type as "ADDED", ev.object.metadata?.resourceVersion ?? "");
    n++;
  }
}

/** How long the watcher waits for the server's version before reporting without it. */
const VERSION_WAIT_MS = 5_000;

/**
 * Asks the ListerWatcher to read the server's version (into its features),
 * for a message that explains a decision. Never throws; gives up after
 * {@linkcode VERSION_WAIT_MS} or on abort.
 */
async function readServerVersion<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
): Promise<void> {
  if (!lw.serverVersion) return;
  const { controller, dispose } = childAbortController(o.signal);
  const timer = o.clock.setTimeout(() => controller.abort(), VERSION_WAIT_MS);
  try {
    await Promise.race([
      lw.serverVersion({ signal: controller.signal }),
      new Promise((resolve) =>
        controller.signal.addEventListener("abort", resolve, { once: true })
      ),
    ]);
  } catch {
    // the version only decorates a message
  } finally {
    o.clock.clearTimeout(timer);
    controller.abort();
    dispose();
  }
}

/**
 * The watch's events in batches: `lw.watchBatches(...)` where it exists
 * (one array per network read), else `lw.watch(...)`'s events one by one.
 * Checked: a ListerWatcher that returns no async iterable, or a batch that
 * is not an array, is a bug to report.
 */
function watchBatchIterable<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  opts: Parameters<ListerWatcher<T>["watch"]>[0],
): AsyncIterable<WatchEvent<T>[]> {
  const batched = typeof lw.watchBatches === "function";
  const stream = batched ? lw.watchBatches!(opts) : lw.watch(opts);
  if (
    stream === null || typeof stream !== "object" ||
    typeof (stream as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] !== "function"
  ) {
    const method = batched ? "watchBatches()" : "watch()";
    throw new MalformedResponseError(
      "lister-watcher",
      `${method} did not return an async iterable`,
    );
  }
  return batched
    ? stream as AsyncIterable<WatchEvent<T>[]>
    : singles(stream as AsyncIterable<WatchEvent<T>>);
}

async function* singles<E>(events: AsyncIterable<E>): AsyncGenerator<E[], void, undefined> {
  for await (const ev of events) yield [ev];
}
