import {
  ListTimeoutError,
  ShortWatchError,
  StreamingListUnsupportedError,
  UnexpectedKindError,
  WatchIdleTimeoutError,
} from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import {
  INITIAL_EVENTS_END_ANNOTATION,
  type KubeObject,
  type KubeObjectLike,
  type WatchEvent,
} from "../api/types.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { childAbortController, delay, unit } from "../async/_async.ts";
import { ConsumerFailure, failureKind } from "./_failure_kind.ts";
import { adaptiveIdleMs, MAX_BOOKMARK_GAP_MS, withIdleDeadline } from "./_idle_deadline.ts";
import { listAllPages, type ListResult } from "./list_pager.ts";
import {
  type FailureKind,
  initialState,
  type MachineState,
  next,
  type Outcome,
  type Phase,
  type WaitKind,
} from "./_watch_machine.ts";
import {
  kindMatches,
  type ResolvedWatcherOptions,
  resolveWatcherOptions,
} from "./_resolve_watcher_options.ts";
import type { ErrorPhase, WatcherOptions } from "./watcher_options.ts";

/**
 * What the watcher yields. `LIST` is a complete, consistent snapshot that
 * replaces everything known before (the first list, every relist, the end of
 * a streaming list); the others are changes after it, in order. Every event
 * carries the resourceVersion to resume from once it has been applied.
 */
export type WatcherEvent<T extends KubeObjectLike = KubeObject> =
  | { type: "LIST"; items: T[]; resourceVersion: string }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T; resourceVersion: string }
  | { type: "BOOKMARK"; resourceVersion: string };

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
  const o = resolveWatcherOptions(options);
  const { signal, clock, observer } = o;
  const limits = limitsOf(o);
  // A server already known (in this process) to refuse streaming lists is not asked again.
  const streaming = o.useStreamingList && lw.features?.streamingList !== false;
  let state: MachineState = initialState(
    o.initialResourceVersion,
    streaming,
    o.resumeResourceVersion,
  );
  if (!o.resumeResourceVersion) observer.relist?.("initial");

  while (true) {
    if (signal?.aborted) return; // the one abort rule: a loop ends quietly on its own signal
    const run: Run = { state, outcome: undefined, retryAfterMs: undefined };
    try {
      yield* perform(lw, o, run, (s) => (state = s));
    } catch (err) {
      // Anything thrown while performing a phase that it did not turn into
      // an outcome: an abort, or a bug (ours or a broken ListerWatcher).
      if (signal?.aborted) return;
      report(o, err, run.state.phase.kind === "list" ? "list" : "watch");
      run.outcome = failed("bug", run.state.phase.rv, 0, 0);
    }
    const outcome = run.outcome ?? failed("bug", state.phase.rv, 0, 0);
    const t = next(state, outcome, limits);
    if (state.streaming && !t.state.streaming && lw.features) {
      lw.features.streamingList = false; // remembered for this server, for the process
    }
    state = t.state;
    if (t.relist) observer.relist?.(t.relist);
    const ms = waitMs(o, t.wait, run.retryAfterMs);
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

/** One phase being performed: its state on entry, and what came of it. */
interface Run {
  state: MachineState;
  outcome: Outcome | undefined;
  /** A `Retry-After` the server sent with the failure, in ms (validated, not yet capped). */
  retryAfterMs: number | undefined;
}

function failed(failure: FailureKind, rv: string, events: number, durationMs: number): Outcome {
  return { kind: "failed", failure, rv, events, durationMs };
}

/** The wait in ms for a wait kind: backoff schedules, with `Retry-After` capped by `maxRetryAfterMs`. */
function waitMs(
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

function report(o: ResolvedWatcherOptions, err: unknown, phase: ErrorPhase): void {
  try {
    o.onError(err, phase);
  } catch { /* an error handler's own failure must not stop the watcher */ }
}

/** Performs `run.state`'s phase, sets `run.outcome`, yields what the consumer must apply. */
async function* perform<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  run: Run,
  setState: (s: MachineState) => void,
): AsyncGenerator<WatcherEvent<T>[], void, undefined> {
  const { phase } = run.state;
  if (phase.kind === "list") {
    const items = await performList(lw, o, run, phase.rv);
    if (run.outcome?.kind !== "listed") return;
    try {
      yield [{ type: "LIST", items: items!, resourceVersion: run.outcome.rv }];
    } catch (err) {
      if (!(err instanceof ConsumerFailure)) throw err;
      run.outcome = failed("bad-data", phase.rv, 0, 0); // the consumer could not apply it
    }
    return;
  }
  yield* performWatch(lw, o, run, phase, setState);
}

/** Lists every page; sets `run.outcome`; returns the items to yield on success. */
async function performList<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  run: Run,
  rv: string,
): Promise<T[] | undefined> {
  const { clock, observer, signal } = o;
  const started = clock.now();
  observer.state?.({ state: "listing" });
  let result: ListResult<T>;
  try {
    result = checkList(await listWithDeadline(lw, rv, o));
    checkListKind(result, o.expectedKind);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    observer.listFailed?.({ durationMs: clock.now() - started, error: err });
    report(o, err, "list");
    run.retryAfterMs = retryAfterOf(err);
    run.outcome = failed(failureKind(err), rv, 0, clock.now() - started);
    return undefined;
  }
  observer.listDone?.({
    durationMs: clock.now() - started,
    items: result.items.length,
    resourceVersion: result.resourceVersion,
  });
  run.outcome = { kind: "listed", rv: result.resourceVersion };
  return usableItems(result.items, o, "list");
}

/**
 * One watch request (a streaming list first collects its initial events
 * into a keyed pending snapshot, then goes on as a watch); sets `run.outcome`.
 */
async function* performWatch<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  run: Run,
  phase: Extract<Phase, { kind: "stream" | "watch" }>,
  setState: (s: MachineState) => void,
): AsyncGenerator<WatcherEvent<T>[], void, undefined> {
  const { signal, clock, observer } = o;
  const streaming = phase.kind === "stream";
  const timeoutSeconds = Math.max(
    1,
    Math.floor((o.minWatchTimeoutMs / 1000) * (1 + unit(o.random()))),
  );
  const features = lw.features;
  const safeIdleMs = timeoutSeconds * 1000 + o.idleGraceMs;
  // Read again as the watch runs: periodic bookmarks learnt on this very
  // watch shorten its own deadline too.
  const learntIdleMs = () =>
    o.idleTimeoutMs === undefined ? adaptiveIdleMs(features, safeIdleMs, established) : undefined;
  const idleMs = () => o.idleTimeoutMs ?? learntIdleMs() ?? safeIdleMs;
  const { controller, dispose } = childAbortController(signal);
  const started = clock.now();
  /** When the watch proper began: the request, or a streaming list's end bookmark. */
  let watchStarted = started;
  /** When the last periodic bookmark came (never the end of a streaming list's initial events). */
  let lastBookmarkAt: number | undefined;
  /** A periodic bookmark or an event came after the watch proper began: later bookmarks cannot be skipped. */
  let established = false;
  // A streaming list is bounded like a list: its end bookmark must come within listTimeoutMs.
  let listDeadline = streaming
    ? clock.setTimeout(
      () => controller.abort(new ListTimeoutError(o.listTimeoutMs)),
      o.listTimeoutMs,
    )
    : undefined;
  let pending: Map<string, T> | undefined = streaming ? new Map() : undefined;
  let rv = phase.rv;
  /** The last version the consumer has taken (rv runs ahead of it while the consumer holds an event). */
  let applied = rv;
  /** Events that made progress: applied, or a bookmark that moved the version on. */
  let progress = 0;
  // "watching" (the consumer is current) once the watch has proven itself:
  // an event that made progress, or open for shortWatchMs after the server
  // accepted it. A watch accepted and closed at once never counts.
  let proven = false;
  let proveTimer: unknown;
  const prove = () => {
    if (proven) return; // once per event: nothing more to do
    clock.clearTimeout(proveTimer);
    if (pending) return;
    proven = true;
    observer.state?.({ state: "watching" });
  };
  const accepted = () => {
    if (proveTimer === undefined && !proven) proveTimer = clock.setTimeout(prove, o.shortWatchMs);
  };
  observer.watchStart?.();
  observer.state?.({ state: streaming ? "listing" : "connecting" });
  try {
    const stream = watchBatchIterable(lw, {
      resourceVersion: rv,
      timeoutSeconds,
      allowWatchBookmarks: true,
      sendInitialEvents: streaming || undefined,
      resourceVersionMatch: streaming ? "NotOlderThan" : undefined,
      signal: controller.signal,
      onConnected: accepted,
    });
    const adaptive = o.idleTimeoutMs === undefined && features !== undefined;
    // The error names how a learnt deadline was chosen (and the server's version, when known).
    const why = () => {
      const interval = features?.bookmarkIntervalMs;
      if (learntIdleMs() === undefined || interval === undefined) return undefined;
      const server = features?.version ? `kube-apiserver ${features.version}` : "the server";
      return `learnt from ${server}'s periodic bookmarks, one every ${
        Math.round(interval / 1000)
      } s`;
    };
    for await (
      const batch of withIdleDeadline(stream, idleMs, clock, controller, adaptive, why)
    ) {
      if (!Array.isArray(batch)) {
        throw new MalformedResponseError("lister-watcher", "watchBatches() yielded a non-array");
      }
      /** What this read gives the consumer, and the version it brings it to. */
      let out: WatcherEvent<T>[] = [];
      let outRv = applied;
      try {
        for (const ev of batch) {
          accepted();
          const problem = eventProblem(ev);
          if (problem) throw new MalformedResponseError("watch event", problem);
          if (ev.type === "ERROR") throw statusError(ev.object);
          const evRv = ev.object.metadata?.resourceVersion;
          if (evRv === undefined || evRv === "") {
            // A watch from "" would start "from now" and miss what happened in between.
            throw new MalformedResponseError("watch event", "metadata.resourceVersion is missing");
          }
          observer.event?.(ev.type, evRv);
          if (ev.type === "BOOKMARK") {
            if (evRv !== rv) progress++;
            rv = evRv;
            if (
              pending && ev.object.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === "true"
            ) {
              const items = [...pending.values()];
              pending = undefined;
              clock.clearTimeout(listDeadline);
              listDeadline = undefined;
              observer.listDone?.({
                durationMs: clock.now() - started,
                items: items.length,
                resourceVersion: rv,
              });
              run.state = next(run.state, { kind: "synced", rv }, limitsOf(o)).state;
              setState(run.state);
              if (features) features.streamingList = true;
              watchStarted = clock.now();
              progress = 1;
              prove();
              out.push({ type: "LIST", items, resourceVersion: rv });
              outRv = rv;
            } else if (!pending) {
              const now = clock.now();
              // Two bookmarks on one watch: the server sends them periodically
              // (1.27+), so later watches to it can use a short idle deadline.
              // The smallest gap is the period (the server skips a periodic
              // bookmark whose version is not past the watch's start); the
              // bookmark it sends just before the watch's timeout is not periodic.
              const gap = lastBookmarkAt === undefined ? undefined : now - lastBookmarkAt;
              const beforeTimeout = now - started >= timeoutSeconds * 1000 - PRE_TIMEOUT_MS;
              if (features && gap !== undefined && gap <= MAX_BOOKMARK_GAP_MS && !beforeTimeout) {
                const first = features.bookmarkIntervalMs === undefined;
                features.bookmarkIntervalMs = Math.min(features.bookmarkIntervalMs ?? gap, gap);
                // The learnt deadline's message names the server's version.
                if (first && features.version === undefined) void readServerVersion(lw, o);
              }
              lastBookmarkAt = now;
              established = true;
              prove();
              out.push({ type: "BOOKMARK", resourceVersion: rv });
              outRv = rv;
            }
          } else if (!kindMatches(ev.object, o.expectedKind)) {
            report(o, unexpectedKind(ev.object, o.expectedKind!), "event");
          } else if (pending) {
            // The pending snapshot is keyed, as client-go's temporary store: a
            // MODIFIED replaces, a DELETED removes what the initial events added.
            const key = objectKey(ev.object);
            if (ev.type === "DELETED") pending.delete(key);
            else pending.set(key, heldItem(o.reuseListed?.(ev.object), o) ?? ev.object);
            rv = evRv;
          } else {
            rv = evRv;
            progress++;
            established = true;
            prove();
            out.push({ type: ev.type, object: ev.object, resourceVersion: rv });
            outRv = rv;
          }
        }
      } catch (err) {
        // A bad event: what came before it in this read is applied first.
        if (out.length > 0) {
          const ready = out;
          out = [];
          yield ready;
          applied = outRv;
        }
        throw err;
      }
      if (out.length > 0) {
        yield out;
        applied = outRv;
      }
    }
    // A stream that ends quietly when its request is aborted (the idle
    // deadline, the streaming-list deadline) has failed, not ended.
    controller.signal.throwIfAborted();
    const durationMs = clock.now() - watchStarted;
    const short = !pending && progress === 0 && durationMs < o.shortWatchMs;
    const err = pending
      ? new MalformedResponseError(
        "streaming list",
        "the watch ended before its initial-events-end bookmark; staying unsynced and retrying",
      )
      : short
      ? new ShortWatchError(durationMs)
      : undefined;
    observer.watchEnd?.({ durationMs, events: progress, error: err, short });
    if (err) report(o, err, "watch");
    run.outcome = { kind: "ended", rv: applied, events: progress, durationMs };
  } catch (caught) {
    if (signal?.aborted) throw signal.reason;
    const err = controller.signal.aborted ? controller.signal.reason : caught;
    const durationMs = clock.now() - watchStarted;
    if (err instanceof WatchIdleTimeoutError && learntIdleMs() !== undefined && features) {
      // The short deadline fired: a dead peer, or a server that stopped
      // sending periodic bookmarks. Use the safe deadline until they are seen again.
      features.bookmarkIntervalMs = undefined;
    }
    observer.watchEnd?.({ durationMs, events: progress, error: err, short: false });
    const kind = failureKind(err, run.state.phase.kind === "stream");
    // Giving up streaming lists is reported once per server (watchers that
    // started together are all refused), with the server's version.
    const known = kind === "unsupported" && features?.streamingListRefusalReported === true;
    if (kind === "unsupported" && features) features.streamingListRefusalReported = true;
    if (kind === "unsupported" && !known && features?.version === undefined) {
      await readServerVersion(lw, o);
    }
    // The consumer reports its own failures (a store that could not apply an event).
    if (!(err instanceof ConsumerFailure) && !known) {
      report(
        o,
        kind === "unsupported" ? new StreamingListUnsupportedError(features?.version, err) : err,
        "watch",
      );
    }
    run.retryAfterMs = retryAfterOf(err);
    // An ERROR event that is not a 410 means the stream cannot be trusted past it: relist.
    const fromEvent = err instanceof KubeStatusError && err.request === ERROR_EVENT;
    run.outcome = failed(
      fromEvent && kind !== "expired" ? "bad-data" : kind,
      applied,
      progress,
      durationMs,
    );
  } finally {
    clock.clearTimeout(listDeadline);
    clock.clearTimeout(proveTimer);
    dispose();
  }
}

/** kube-apiserver sends a last bookmark 2 s before a watch's timeout; bookmarks this close to it are not periodic. */
const PRE_TIMEOUT_MS = 5_000;

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

function limitsOf(o: ResolvedWatcherOptions) {
  return { shortWatchMs: o.shortWatchMs, streamingListAttempts: o.streamingListAttempts };
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

const ERROR_EVENT = "watch ERROR event";

/** Why a watch event cannot be used, or undefined. A ListerWatcher of ours checks this already. */
const EVENT_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]);

function eventProblem(ev: unknown): string | undefined {
  const e = ev as { type?: unknown; object?: unknown } | null;
  if (e === null || typeof e !== "object") return "not an object";
  const obj = e.object as { metadata?: unknown } | null;
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    return "object is not an object";
  }
  if (e.type === "ERROR") return undefined;
  if (!EVENT_TYPES.has(e.type as string)) {
    return "unknown event type";
  }
  return metadataProblem(obj);
}

/** Why an object's metadata cannot be used, or undefined. */
function metadataProblem(obj: { metadata?: unknown }): string | undefined {
  const m = obj.metadata as { resourceVersion?: unknown } | null | undefined;
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "metadata is not an object";
  if (m.resourceVersion !== undefined && typeof m.resourceVersion !== "string") {
    return "metadata.resourceVersion is not a string";
  }
  return undefined;
}

/** The key of an object within one resource: `namespace/name`, or `name` when cluster-scoped. */
function objectKey(obj: KubeObjectLike): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : `${m.name ?? ""}`;
}

/** A validated `Retry-After` of an error, in ms. */
function retryAfterOf(err: unknown): number | undefined {
  if (!(err instanceof KubeStatusError)) return undefined;
  const ms = err.retryAfterMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * Lists every page, each request under its own `listTimeoutMs` deadline (a
 * large paginated list may take longer in total; one stuck request may not).
 *
 * A list at a specific version (a relist from the last synced version) is
 * unpaginated, as client-go's reflector does: with `limit` set, the API
 * server reads exactly that version from etcd (which may still hold it right
 * after a restart whose watch cache no longer does, so the next watch would
 * 410 again, forever); without `limit` the watch cache serves it as "not
 * older than", and etcd is spared a thundering herd.
 */
async function listWithDeadline<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  o: ResolvedWatcherOptions,
): Promise<ListResult<T>> {
  const timed: ListerWatcher<T> = {
    watch: (opts) => lw.watch(opts),
    list: async (opts) => {
      const { controller, dispose } = childAbortController(o.signal);
      // The error is made when the deadline fires, not per page (a stack trace each).
      let timeout: ListTimeoutError | undefined;
      const handle = o.clock.setTimeout(
        () => controller.abort(timeout = new ListTimeoutError(o.listTimeoutMs)),
        o.listTimeoutMs,
      );
      try {
        return await lw.list({ ...opts, signal: controller.signal });
      } catch (err) {
        if (timeout !== undefined && controller.signal.reason === timeout) throw timeout;
        throw err;
      } finally {
        o.clock.clearTimeout(handle);
        dispose();
      }
    },
  };
  const exactVersion = resourceVersion !== "" && resourceVersion !== "0";
  return await listAllPages(timed, {
    resourceVersion,
    pageSize: exactVersion ? 0 : o.pageSize,
    signal: o.signal,
    reuse: listReuse(o),
  });
}

/**
 * What a list may put in place of each listed item: the answer of
 * `o.reuseListed`, asked only for an item the watcher would hand on (an
 * object with usable metadata, of the expected kind; a wrong one is left in
 * place, to be reported and left out by {@linkcode usableItems}) and taken
 * only if it is itself such an item. Anything else keeps the listed item.
 */
function listReuse(
  o: ResolvedWatcherOptions,
): ((item: KubeObjectLike) => KubeObjectLike | undefined) | undefined {
  const reuse = o.reuseListed;
  if (reuse === undefined) return undefined;
  return (item) => isUsableItem(item, o) ? heldItem(reuse(item), o) : undefined;
}

/** `answer`, if it is an item the watcher may hand on; otherwise undefined. */
function heldItem<T extends KubeObjectLike>(
  answer: unknown,
  o: ResolvedWatcherOptions,
): T | undefined {
  return isUsableItem(answer, o) ? answer as T : undefined;
}

/** An object with usable metadata, of the expected kind. */
function isUsableItem(item: unknown, o: ResolvedWatcherOptions): boolean {
  return item !== null && typeof item === "object" && !Array.isArray(item) &&
    metadataProblem(item as { metadata?: unknown }) === undefined &&
    kindMatches(item as KubeObjectLike, o.expectedKind);
}

/** A list result must have an items array and a non-empty string resourceVersion. */
function checkList<T extends KubeObjectLike>(result: ListResult<T>): ListResult<T> {
  if (result === null || typeof result !== "object" || !Array.isArray(result.items)) {
    throw new MalformedResponseError("list", "items is not an array");
  }
  if (typeof result.resourceVersion !== "string") {
    throw new MalformedResponseError("list", "metadata.resourceVersion is not a string");
  }
  if (result.resourceVersion === "") {
    // A list is exact at some version; without one, the next watch would
    // start "from now" and silently miss what happened in between.
    throw new MalformedResponseError("list", "metadata.resourceVersion is missing");
  }
  return result;
}

/** The error an ERROR event stands for (a malformed Status never throws here). */
function statusError(status: unknown): KubeStatusError {
  return KubeStatusError.fromStatus(status, { request: ERROR_EVENT });
}

function unexpectedKind(obj: KubeObjectLike, expected: string): UnexpectedKindError {
  const m = obj.metadata ?? {};
  return new UnexpectedKindError(
    expected,
    typeof obj.kind === "string" ? obj.kind : "",
    m.namespace ? `${m.namespace}/${m.name}` : m.name ?? "",
  );
}

function checkListKind(result: ListResult<KubeObjectLike>, expected: string | undefined): void {
  if (!expected || !result.kind || result.kind === "List") return;
  if (result.kind === "PartialObjectMetadataList") return; // metadataOnly: see kindMatches
  if (result.kind !== `${expected}List`) {
    throw new UnexpectedKindError(`${expected}List`, String(result.kind), "");
  }
}

/**
 * The items a list may hand on: each must be an object with a `metadata`
 * object (and a string resourceVersion, if any) and of the expected kind;
 * others are reported and left out, never stored.
 */
function usableItems<T extends KubeObjectLike>(
  items: T[],
  o: ResolvedWatcherOptions,
  phase: ErrorPhase,
): T[] {
  const usable = (item: unknown, i: number): boolean => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      const what = item === null ? "null" : Array.isArray(item) ? "an array" : typeof item;
      report(
        o,
        new MalformedResponseError("list item", `item ${i} is ${what}, not an object`),
        phase,
      );
      return false;
    }
    const problem = metadataProblem(item as { metadata?: unknown });
    if (problem) {
      report(o, new MalformedResponseError("list item", `item ${i}: ${problem}`), phase);
      return false;
    }
    if (!kindMatches(item as T, o.expectedKind)) {
      report(o, unexpectedKind(item as T, o.expectedKind!), "event");
      return false;
    }
    return true;
  };
  let all = true;
  for (let i = 0; i < items.length && all; i++) {
    all = isUsableItem(items[i], o);
  }
  return all ? items : items.filter(usable);
}
