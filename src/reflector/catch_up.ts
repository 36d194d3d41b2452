/**
 * One-shot catch-up from a checkpoint, for scripts that wake, act and exit.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { isExpired } from "../api/predicates.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import { heldCopy } from "../cache/_held_copy.ts";
import type { CheckpointStorage } from "../checkpoint/checkpoint_storage.ts";
import { loadCheckpoint } from "../checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../checkpoint/save_checkpoint.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { listAllPages } from "./list_pager.ts";
import { delay } from "../async/_async.ts";
import type { ErrorHandler } from "./watcher_options.ts";

/** Options of {@linkcode catchUp}. */
export interface CatchUpOptions {
  /** Where the checkpoint lives. Required. */
  storage: CheckpointStorage;
  /** The checkpoint's key. Required. */
  key: string;
  /** What the checkpoint must be for. Default: the lister-watcher's `identity()`. */
  identity?: ResourceIdentity;
  /**
   * The wall-clock budget: when it runs out, catching up stops where it is
   * (`complete: false`), what was applied is saved, and `catchUp` returns.
   * Default: `10_000` ms.
   */
  budgetMs?: number;
  /**
   * `timeoutSeconds` of each watch. kube-apiserver's watch cache sends a
   * bookmark with its current version 2 s before a watch's timeout (none at
   * all for a timeout under 3 s), which is what proves a resource caught up
   * when its last change is older than the target; a short timeout gets it
   * soon. Default: `3`.
   */
  watchTimeoutSeconds?: number;
  /** Receives the errors that were handled (a checkpoint ignored, a watch retried). Default: `console.warn`. */
  onError?: ErrorHandler;
  /** Aborts: `catchUp` rejects with `signal.reason` and saves nothing. */
  signal?: AbortSignal;
  /** Injectable time. Default: the system clock. */
  clock?: Clock;
}

/** One change found by {@linkcode catchUp}, in the order the server made them. */
export type CatchUpChange<T extends KubeObjectLike = KubeObject> =
  | { type: "add"; key: string; object: T }
  | { type: "update"; key: string; oldObject: T; object: T }
  | { type: "delete"; key: string; object: T };

/** What {@linkcode catchUp} found and saved. */
export interface CatchUpResult<T extends KubeObjectLike = KubeObject> {
  /**
   * The changes since the checkpoint: every add, update and delete the watch
   * delivered, in order; after a relist, the difference between the
   * checkpoint and the list (no intermediate states); without a checkpoint,
   * every object as an add.
   */
  changes: CatchUpChange<T>[];
  /** Every object now, by key (`namespace/name`). */
  objects: Map<string, T>;
  /** The resourceVersion `objects` are exact at (what was saved). */
  resourceVersion: string;
  /** The version to reach: a consistent `limit=1` list's, read when `catchUp` started. */
  target: string;
  /**
   * True when every change up to `target` is in `objects`: an event or
   * bookmark at or past `target` was applied, or a consistent list was used.
   * False when the budget ran out first.
   */
  complete: boolean;
  /**
   * Why the objects were listed, when they were: no checkpoint, an unusable
   * one, one too old (410), or a server that gave no proof (two watches in a
   * row ended without any bookmark: kube-apiserver before 1.31, or one
   * without its watch cache, sends none).
   */
  listed?: "no-checkpoint" | "unusable-checkpoint" | "expired" | "no-proof";
  /** The checkpoint written at the end (count and bytes), unless saving failed (reported). */
  saved?: { count: number; bytes: number };
}

/**
 * Catches up from a checkpoint and saves a new one: the one-shot mode of a
 * script that wakes, acts on what changed since its last run, and exits.
 *
 * 1. Reads the target version: a consistent list with `limit=1` (one object,
 *    whatever the resource's size), made when `catchUp` starts.
 * 2. Loads the checkpoint under `key` (one of another identity, corrupt or
 *    truncated is reported and ignored: then everything is listed).
 * 3. Watches from the checkpoint's version with bookmarks, applying every
 *    event, until an event or bookmark at or past the target has been
 *    applied. That is the guarantee: every change made before `catchUp`
 *    started is in the result. Versions are compared as integers, which is
 *    what kube-apiserver's etcd revisions are; a server whose versions are
 *    not integers is listed instead. When the resource's last change is the
 *    target, its event is the proof (milliseconds). Otherwise the proof is
 *    the bookmark kube-apiserver 1.31+ sends 2 s before a watch's timeout
 *    (its consistent `limit=1` list brought its watch cache up to the
 *    target): about 1 s with the default 3 s watches. Older servers, or one
 *    without its watch cache, send no such bookmark: after two watches in a
 *    row without any bookmark, one consistent list decides instead
 *    (`listed: "no-proof"`). A 410 (the version is gone, e.g. the API server
 *    restarted since) lists too (`listed: "expired"`).
 * 4. Saves the objects at the last version applied, and returns the changes.
 *
 * Within the server's window it issues no list but the `limit=1` one. The
 * budget bounds the whole call; when it runs out, `complete` is false, and
 * what was applied (a consistent state at `resourceVersion`) is saved.
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
  const {
    storage,
    key,
    budgetMs = 10_000,
    watchTimeoutSeconds = 3,
    signal,
    clock = systemClock,
    onError = (err: unknown, phase: string) =>
      console.warn(
        `[catchUp ${key}] ${phase}: ${err instanceof Error ? err.message : String(err)}`,
      ),
  } = options ?? {};
  if (!storage || typeof storage.get !== "function" || typeof storage.put !== "function") {
    throw new TypeError("catchUp: storage must be a CheckpointStorage");
  }
  if (typeof key !== "string" || key === "") {
    throw new TypeError("catchUp: key must be a non-empty string");
  }
  if (typeof budgetMs !== "number" || !Number.isFinite(budgetMs) || budgetMs <= 0) {
    throw new RangeError(`catchUp: budgetMs must be a finite number > 0, got ${budgetMs}`);
  }
  if (
    !Number.isInteger(watchTimeoutSeconds) || watchTimeoutSeconds < 3 || watchTimeoutSeconds > 3600
  ) {
    throw new RangeError(
      `catchUp: watchTimeoutSeconds must be an integer in [3, 3600], got ${watchTimeoutSeconds}`,
    );
  }
  signal?.throwIfAborted();
  const report = (err: unknown, phase: Parameters<ErrorHandler>[1]) => {
    try {
      onError(err, phase);
    } catch { /* ignored */ }
  };
  // the budget: one signal for every request, aborted when it runs out
  const budget = new AbortController();
  const onAbort = () => budget.abort(signal!.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const timer = clock.setTimeout(() => budget.abort(new BudgetExhausted()), budgetMs);
  try {
    const identity = options.identity ?? await identityOf(lw, budget.signal);
    const target = (await lw.list({ resourceVersion: "", limit: 1, signal: budget.signal }))
      .metadata.resourceVersion ?? "";
    let loaded;
    let listed: CatchUpResult<T>["listed"];
    try {
      loaded = await loadCheckpoint<T>(storage, key, identity, { signal: budget.signal });
      if (!loaded) listed = "no-checkpoint";
    } catch (err) {
      if (budget.signal.aborted) throw err;
      report(err, "checkpoint");
      listed = "unusable-checkpoint";
    }
    const objects = new Map<string, T>();
    for (const o of loaded?.items ?? []) objects.set(metaNamespaceKeyFunc(o), o);
    const changes: CatchUpChange<T>[] = [];
    let rv = loaded?.resourceVersion ?? "";
    let complete = false;
    const goal = version(target);
    if (loaded && goal === undefined) listed = "unusable-checkpoint"; // cannot prove: list
    if (!listed) {
      const r = await watchUntil(
        lw,
        objects,
        changes,
        rv,
        goal!,
        watchTimeoutSeconds,
        budget.signal,
        clock,
        report,
      );
      rv = r.rv;
      complete = r.reached;
      if (r.expired) listed = "expired";
      else if (r.noProof) listed = "no-proof";
    }
    if (listed) {
      // what the checkpoint already holds unchanged is not held twice while the list arrives
      const reuse = (item: KubeObjectLike) => heldCopy(objects, metaNamespaceKeyFunc, item as T);
      const list = await listAllPages(lw, { resourceVersion: "", signal: budget.signal, reuse });
      diffInto(objects, list.items, changes);
      rv = list.resourceVersion;
      complete = true;
    }
    let saved: CatchUpResult<T>["saved"];
    try {
      saved = await saveCheckpoint(storage, key, {
        identity,
        resourceVersion: rv,
        items: objects.values(),
      }, {
        signal,
      });
    } catch (err) {
      signal?.throwIfAborted();
      report(err, "checkpoint");
    }
    return { changes, objects, resourceVersion: rv, target, complete, listed, saved };
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (err instanceof BudgetExhausted || budget.signal.reason instanceof BudgetExhausted) {
      throw new Error(
        `catchUp ${key}: the budget of ${budgetMs} ms ran out before the checkpoint was read or listed`,
      );
    }
    throw err;
  } finally {
    clock.clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** The reason the budget's signal aborts with. */
class BudgetExhausted extends Error {
  constructor() {
    super("the catch-up budget ran out");
  }
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
  return lw.identity({ signal });
}

/** A resourceVersion as an integer, or undefined when it is not one. */
function version(rv: string | undefined): bigint | undefined {
  return rv && /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

/**
 * Watches from `rv`, applying events, until one at or past `goal` is applied
 * (`reached`), the version is gone (`expired`), or the budget runs out.
 * Watches that end (their timeout) are restarted from the last version; one
 * that fails otherwise is retried after a short pause.
 */
async function watchUntil<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  objects: Map<string, T>,
  changes: CatchUpChange<T>[],
  from: string,
  goal: bigint,
  timeoutSeconds: number,
  signal: AbortSignal,
  clock: Clock,
  report: (err: unknown, phase: "watch") => void,
): Promise<{ rv: string; reached: boolean; expired: boolean; noProof: boolean }> {
  let rv = from;
  const reached = () => (version(rv) ?? -1n) >= goal;
  const stop = (how: { expired?: boolean; noProof?: boolean } = {}) => ({
    rv,
    reached: false,
    expired: how.expired ?? false,
    noProof: how.noProof ?? false,
  });
  let withoutBookmark = 0; // watches in a row that ended with no bookmark at all
  while (!reached()) {
    if (signal.aborted) return stop();
    if (withoutBookmark >= 2) return stop({ noProof: true });
    try {
      let bookmarks = 0;
      const events = lw.watch({
        resourceVersion: rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        signal,
      });
      for await (const ev of events) {
        if (ev.type === "ERROR") {
          const status = ev.object as { code?: unknown };
          if (status?.code === 410) return stop({ expired: true });
          throw new Error(`the watch sent an ERROR event (code ${String(status?.code)})`);
        }
        const object = ev.object as T;
        const evRv = object?.metadata?.resourceVersion;
        if (typeof evRv !== "string" || evRv === "") {
          throw new Error("a watch event without a resourceVersion");
        }
        if (ev.type === "BOOKMARK") bookmarks++;
        else apply(objects, changes, ev.type, object);
        rv = evRv;
        if (reached()) break;
      }
      withoutBookmark = bookmarks > 0 ? 0 : withoutBookmark + 1;
    } catch (err) {
      if (signal.aborted) return stop();
      if (isExpired(err)) return stop({ expired: true });
      report(err, "watch");
      try {
        await delay(500, signal, clock);
      } catch {
        return stop();
      }
    }
  }
  return { rv, reached: true, expired: false, noProof: false };
}

function apply<T extends KubeObjectLike>(
  objects: Map<string, T>,
  changes: CatchUpChange<T>[],
  type: "ADDED" | "MODIFIED" | "DELETED",
  object: T,
): void {
  const key = metaNamespaceKeyFunc(object);
  const old = objects.get(key);
  if (type === "DELETED") {
    if (!old) return;
    objects.delete(key);
    changes.push({ type: "delete", key, object });
  } else {
    objects.set(key, object);
    changes.push(
      old ? { type: "update", key, oldObject: old, object } : { type: "add", key, object },
    );
  }
}

/** Makes `objects` the list's items, recording what differs: adds, updates (a new resourceVersion), deletes. */
function diffInto<T extends KubeObjectLike>(
  objects: Map<string, T>,
  items: T[],
  changes: CatchUpChange<T>[],
): void {
  const gone = new Map(objects);
  for (const object of items) {
    const key = metaNamespaceKeyFunc(object);
    const old = objects.get(key);
    gone.delete(key);
    objects.set(key, object);
    if (!old) changes.push({ type: "add", key, object });
    else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      changes.push({ type: "update", key, oldObject: old, object });
    }
  }
  for (const [key, object] of gone) {
    objects.delete(key);
    changes.push({ type: "delete", key, object });
  }
}
