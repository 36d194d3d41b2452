/**
 * One-shot catch-up from a checkpoint, for scripts that wake, act and exit.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { abortable } from "../async/_abortable.ts";
import { childAbortController } from "../async/_async.ts";
import { CheckpointError } from "../checkpoint/checkpoint_error.ts";
import { loadCheckpoint, type LoadedCheckpoint } from "../checkpoint/load_checkpoint.ts";
import { saveCheckpoint, type SavedCheckpoint } from "../checkpoint/save_checkpoint.ts";
import { ListProgress } from "./_list_progress.ts";
import { isObjectLike } from "../checkpoint/_format.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";
import { CatchUpState, versionOf } from "./_catch_up_state.ts";
import { type ResolvedWatcherOptions, resolveWatcherOptions } from "./_resolve_watcher_options.ts";
import { CatchUpBudgetError } from "./catch_up_budget_error.ts";
import {
  type CatchUpListReason,
  type CatchUpOptions,
  type CatchUpResult,
  resolveCatchUpOptions,
  type ResolvedCatchUpOptions,
} from "./catch_up_options.ts";
import { checkListKind } from "./_perform_list.ts";
import { retriedRead } from "./_retried_read.ts";
import { type WatcherEvent, watchResolved } from "./watcher.ts";
import type { ErrorPhase, RelistReason } from "./watcher_options.ts";

/**
 * Catches up from a checkpoint and saves a new one: the one-shot mode of a
 * script that wakes, acts on what changed since its last run, and exits.
 * Its requests follow the watcher's recovery rules (the same backoff,
 * `Retry-After`, and meaning of a 410, an ERROR event, a malformed event, a
 * 429 or a refusal as a `Reflector`'s).
 *
 * 1. Reads the target version: a consistent list with `limit=1` (one object,
 *    whatever the resource's size), made when `catchUp` starts.
 * 2. Loads the checkpoint under `key` (one of another identity, corrupt,
 *    truncated or unreadable is reported and ignored; one at a version newer
 *    than the target, from an etcd restored from a backup, too: then
 *    everything is listed).
 * 3. Watches from the checkpoint's version with bookmarks, applying every
 *    event, until an event or bookmark at or past the target has been
 *    applied. That is the guarantee: every change made before `catchUp`
 *    started is in the result. Versions are compared as integers, which is
 *    what kube-apiserver's etcd revisions are; a server whose versions are
 *    not integers is listed instead. When the resource's last change is the
 *    target, its event is the proof (milliseconds). Otherwise the proof is
 *    the bookmark kube-apiserver 1.31+ sends 2 s before a watch's timeout
 *    (about 1 s with the default 3 s watches), which comes only if the
 *    server's watch cache for the resource has moved past every event the
 *    watch started behind. It does not when the last write before the
 *    target is a write of this resource outside the selection (a ConfigMap
 *    of another namespace) and nothing was written since; nor on servers
 *    before 1.31, or without their watch cache. So after a watch that ended
 *    before reaching the target (no bookmark, or one below it), the target
 *    is read again: when the cluster has moved on, one more watch may get
 *    the proof; if it has not, or that watch ends without it too, one
 *    consistent list decides instead (`listed: "no-proof"`). A 410 (the version is gone) or a
 *    watch that cannot be trusted relists too.
 * 4. Saves what was applied, incrementally (see `saveCheckpoint`): the net
 *    changes since the checkpoint, nothing when nothing changed, a new
 *    snapshot after listing over a checkpoint that could not be trusted;
 *    and returns the changes.
 *
 * Within the server's window it issues no list but the `limit=1` ones. The
 * budget bounds catching up, storage calls included; when it runs out,
 * `complete` is false and what was applied (a consistent state at
 * `resourceVersion`) is saved, within `saveTimeoutMs` more. A list that
 * does not fit the budget (a first run over many objects) is saved page by
 * page, and the next run goes on from its continue token (`progress` in the
 * result) while it is valid (within the server's compaction interval, 5
 * minutes by default). When the budget runs out before the checkpoint is
 * read, `catchUp` rejects with a {@linkcode CatchUpBudgetError}. Two runs on
 * one key at once are at-least-once: both may report a change; within one
 * process their saves are ordered and the newer state is kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { catchUp, KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { memoryCheckpointStorage } from "../../checkpoint.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "app" } });
 * server.create(cm("a"));
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), { apiVersion: "v1", resource: "configmaps" });
 * const storage = memoryCheckpointStorage();
 * const first = await catchUp(lw, { storage, key: "cms" }); // no checkpoint yet: everything, as adds
 * assert.deepEqual(first.changes.map((c) => `${c.type} ${c.key}`), ["add app/a"]);
 * server.create(cm("b"));
 * const second = await catchUp(lw, { storage, key: "cms" }); // only what changed, and no list
 * assert.deepEqual(second.changes.map((c) => `${c.type} ${c.key}`), ["add app/b"]);
 * assert.equal(second.complete, true);
 * assert.equal(second.listed, undefined);
 * await server.close();
 * ```
 */
export async function catchUp<T extends KubeObjectLike = KubeObject>(
  lw: ListerWatcher<T>,
  options: CatchUpOptions,
): Promise<CatchUpResult<T>> {
  const o = resolveCatchUpOptions(options);
  const { signal, clock, key } = o;
  signal?.throwIfAborted();
  let lastError: unknown;
  const report = (err: unknown, phase: ErrorPhase) => {
    lastError = err;
    try {
      o.onError(err, phase);
    } catch { /* ignored */ }
  };
  // The budget: one signal for every wait, aborted when it runs out.
  const { controller: budget, dispose } = childAbortController(signal);
  const timer = clock.setTimeout(() => budget.abort(new BudgetExhausted()), o.budgetMs);
  let stage = "the lister-watcher's identity";
  try {
    const wo = watcherOptions(o, report);
    const identity = o.identity ?? await identityOf(lw, budget.signal);
    stage = "the target version";
    const target = await readTarget(lw, wo, budget.signal);
    stage = "the checkpoint";
    const { state, goal, progress } = await load<T>(o, identity, target, budget.signal, report);
    // its lists go on page by page from where an unfinished one stopped
    await catchUpTo(lw, progress.wrap(lw), wo, state, goal, budget.signal, report);
    clock.clearTimeout(timer);
    signal?.throwIfAborted();
    // without integer versions, only a consistent list is a proof
    const complete = goal === undefined ? state.listed !== undefined : state.reached(goal);
    const { saved, saveError } = await save(o, identity, state, progress, report);
    // a list still in progress: how far it got (moot once caught up)
    const listing = progress.items > 0 && !complete
      ? {
        items: progress.items,
        ...(progress.remaining === undefined ? {} : { remaining: progress.remaining }),
      }
      : undefined;
    return {
      changes: state.changes,
      // a checkpoint that was not trusted is nothing until the list replaces it
      objects: state.rv === "" ? new Map() : state.objects,
      resourceVersion: state.rv,
      target,
      complete,
      listed: state.listed,
      saved,
      saveError,
      ...(listing ? { progress: listing } : {}),
    };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (budget.signal.reason instanceof BudgetExhausted) {
      throw new CatchUpBudgetError(key, o.budgetMs, stage, lastError);
    }
    throw err;
  } finally {
    clock.clearTimeout(timer);
    dispose();
  }
}

/** Added to a watch's timeout to form its idle deadline (the watcher's default grace is 30 s). */
const CATCH_UP_IDLE_GRACE_MS = 2_000;

/** The reason the budget's signal aborts with. */
class BudgetExhausted extends Error {
  constructor() {
    super("the catch-up budget ran out");
  }
}

/**
 * The watcher's options for catchUp's requests: its clock, handler, kind,
 * watch timeout and a short idle deadline. Its lists are plain LISTs: a process that runs once cannot
 * remember that a server refuses streaming lists, and would pay (and
 * report) the refusal on every run.
 */
function watcherOptions(
  o: ResolvedCatchUpOptions,
  report: (err: unknown, phase: ErrorPhase) => void,
): ResolvedWatcherOptions {
  const options = {
    clock: o.clock,
    random: o.random,
    onError: report,
    useStreamingList: false,
    expectedKind: o.expectedKind,
    // a watch the server holds for watchTimeoutSeconds that stays silent
    // longer than this is a dead connection: cut well within the budget
    idleGraceMs: CATCH_UP_IDLE_GRACE_MS,
  };
  return {
    ...resolveWatcherOptions(options, "catchUp"),
    watchTimeoutSeconds: o.watchTimeoutSeconds,
    consistentFirstList: true,
  };
}

function identityOf<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  signal: AbortSignal,
): Promise<ResourceIdentity> {
  if (!lw.identity) {
    return Promise.reject(
      new TypeError(
        "catchUp: options.identity is required with a lister-watcher that has no identity()",
      ),
    );
  }
  return abortable(lw.identity({ signal }), signal);
}

/**
 * The current version: a consistent `limit=1` list (of the expected kind),
 * retried as the watcher retries a failed list until it answers or
 * `signal` aborts.
 */
function readTarget<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  wo: ResolvedWatcherOptions,
  signal: AbortSignal,
): Promise<string> {
  return retriedRead(wo, signal, async () => {
    const page = await abortable(lw.list({ resourceVersion: "", limit: 1, signal }), signal);
    checkListKind(page ?? {}, wo.expectedKind); // another resource's version is no target
    const rv = page?.metadata?.resourceVersion;
    if (typeof rv === "string" && rv !== "") return rv;
    throw new MalformedResponseError("list", "metadata.resourceVersion is missing");
  });
}

/**
 * Loads the checkpoint into a state, or a state to list into when there is
 * none or it cannot be trusted (reported).
 */
async function load<T extends KubeObjectLike>(
  o: ResolvedCatchUpOptions,
  identity: ResourceIdentity,
  target: string,
  signal: AbortSignal,
  report: (err: unknown, phase: ErrorPhase) => void,
): Promise<{ state: CatchUpState<T>; goal: bigint | undefined; progress: ListProgress<T> }> {
  const goal = versionOf(target);
  let loaded: LoadedCheckpoint<T> | undefined;
  let listed: CatchUpListReason | undefined;
  let damaged = false; // what is stored is wrong (not merely unreadable now): replace it
  try {
    loaded = await loadCheckpoint<T>(o.storage, o.key, identity, {
      signal,
      partial: true,
      cache: o.cache,
    });
    if (!loaded || loaded.resourceVersion === "") listed = "no-checkpoint";
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    report(err, "checkpoint");
    listed = "unusable-checkpoint";
    damaged = err instanceof CheckpointError && err.reason !== "storage";
  }
  const at = versionOf(loaded?.resourceVersion);
  if (listed) {
    // nothing complete to go on from
  } else if (loaded && (goal === undefined || at === undefined)) {
    listed = "unusable-checkpoint"; // versions that are not integers prove nothing: list
    damaged = true;
  } else if (loaded && at! > goal!) {
    report(
      new CheckpointError(
        "ahead-of-server",
        o.key,
        `the checkpoint is at resourceVersion ${loaded.resourceVersion}, newer than the server's ${target} (an etcd restored from a backup?): listed instead`,
      ),
      "checkpoint",
    );
    listed = "ahead-of-server";
    damaged = true;
  }
  const state = new CatchUpState<T>(loaded?.items ?? [], loaded?.resourceVersion ?? "");
  state.nextListReason = listed;
  // a checkpoint that is wrong is replaced, even by objects at its version (or
  // dropped, keeping only the pages of a list that did not finish)
  state.replace = damaged;
  if (listed) state.rv = ""; // nothing in it is exact until the list
  state.since = state.rv; // the changes found are since this version (none: a new snapshot)
  // a list in progress older than the complete objects is moot: going on with
  // it would go back in time (the next save drops it)
  const partial = loaded?.partial;
  const fresh = partial &&
    (loaded!.resourceVersion === "" || (versionOf(partial.resourceVersion) ?? -1n) >= (at ?? 0n));
  const progress = new ListProgress<T>(
    fresh ? partial : undefined,
    (err) => report(err, "list"), // the saved list's continue token expired: it starts over
  );
  return { state, goal, progress };
}

/**
 * Brings `state` up to `goal` on the watcher: a watch from the checkpoint
 * (which relists by the recovery rules when it must), then, without a
 * proof, a second watch if the cluster has moved on, else a consistent list.
 */
async function catchUpTo<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  paged: ListerWatcher<T>,
  wo: ResolvedWatcherOptions,
  state: CatchUpState<T>,
  goal: bigint | undefined,
  signal: AbortSignal,
  report: (err: unknown, phase: ErrorPhase) => void,
): Promise<void> {
  if (goal === undefined) {
    // a server whose versions are not integers: one consistent list is the only proof
    await pass(paged, wo, state, "", undefined, signal, report);
    return;
  }
  if (state.nextListReason === undefined) {
    if (state.reached(goal)) return; // the checkpoint is at the target: nothing happened since
    let end = await pass(paged, wo, state, state.rv, goal, signal, report);
    if (end === "no-proof") {
      // Reading the target again brings the watch cache up to date: if the
      // cluster has moved on, the next watch's bookmark is past the goal.
      const again = await readTarget(lw, wo, signal).catch(() => undefined);
      if (again === undefined) return; // the budget ran out: stop where it is
      const moved = versionOf(again);
      if (moved !== undefined && moved > goal) {
        end = await pass(paged, wo, state, state.rv, goal, signal, report);
      }
    }
    if (end !== "no-proof") return;
    state.nextListReason = "no-proof";
  }
  await pass(paged, wo, state, "", goal, signal, report);
}

/** How a pass ended: the goal reached, a watch without proof, or the budget gone. */
type PassEnd = "reached" | "no-proof" | "stopped";

/**
 * One run of the watcher: from `resume` (a watch), or from a consistent
 * list when `resume` is `""`; applies its events to `state` until the goal
 * is reached (without a goal: the first list), a watch ends cleanly without
 * any bookmark, or `signal` aborts.
 */
async function pass<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  wo: ResolvedWatcherOptions,
  state: CatchUpState<T>,
  resume: string,
  goal: bigint | undefined,
  signal: AbortSignal,
  report: (err: unknown, phase: ErrorPhase) => void,
): Promise<PassEnd> {
  const { controller, dispose } = childAbortController(signal);
  let noProof = false;
  const observer = {
    ...wo.observer,
    relist(reason: RelistReason) {
      if (reason === "expired") state.nextListReason ??= "expired";
      else if (reason === "watch-failed") state.nextListReason ??= "watch-failed";
    },
    watchEnd(info: { error?: unknown; short: boolean }) {
      // A watch that closed (cleanly, or at once with nothing) before the
      // goal brought no proof: the caller decides how to get one, before
      // another watch is made.
      if ((info.error === undefined || info.short) && goal !== undefined) {
        noProof = true;
        controller.abort(); // the loop ends before the next watch
      }
    },
  };
  const batches = watchResolved(lw, {
    ...wo,
    signal: controller.signal,
    resumeResourceVersion: resume,
    reuseListed: state.reuse,
    observer,
  });
  try {
    for await (const batch of batches) {
      for (const ev of batch as WatcherEvent<T>[]) state.apply(ev, report);
      if (goal === undefined ? state.listed !== undefined : state.reached(goal)) return "reached";
    }
  } finally {
    controller.abort();
    dispose();
  }
  return noProof && !signal.aborted ? "no-proof" : "stopped";
}

/**
 * Saves what was applied, within `saveTimeoutMs`: the changes since the
 * checkpoint (nothing when there were none), or a new snapshot, and the
 * pages of a list that did not finish. A failure is reported and returned.
 */
async function save<T extends KubeObjectLike>(
  o: ResolvedCatchUpOptions,
  identity: ResourceIdentity,
  state: CatchUpState<T>,
  progress: ListProgress<T>,
  report: (err: unknown, phase: ErrorPhase) => void,
): Promise<{ saved?: SavedCheckpoint; saveError?: unknown }> {
  const pages = progress.unsaved();
  if (state.rv === "" && pages === undefined) return {}; // nothing consistent to save
  const { controller, dispose } = childAbortController(o.signal);
  const timer = o.clock.setTimeout(
    () => controller.abort(new Error(`the checkpoint save took over ${o.saveTimeoutMs} ms`)),
    o.saveTimeoutMs,
  );
  try {
    const saved = await saveCheckpoint(o.storage, o.key, {
      identity,
      resourceVersion: state.rv,
      items: state.objects.values(),
      changes: state.since !== "" && state.rv !== ""
        ? { since: state.since, objects: state.netChanges() }
        : undefined,
      // only what a list may hand on: an item without metadata cannot be saved
      progress: pages && { ...pages, items: pages.items.filter(isObjectLike) },
      listed: state.listed !== undefined,
      replace: state.replace,
    }, { signal: controller.signal, now: () => o.clock.now(), cache: o.cache });
    if (pages) progress.markSaved(pages);
    return { saved };
  } catch (err) {
    o.signal?.throwIfAborted();
    const why = controller.signal.aborted ? controller.signal.reason : err;
    report(why, "checkpoint");
    return { saveError: why };
  } finally {
    o.clock.clearTimeout(timer);
    dispose();
  }
}
