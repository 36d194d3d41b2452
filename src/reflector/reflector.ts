import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { Store } from "../cache/store.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { childAbortController, delay } from "../async/_async.ts";
import { type WatcherEvent, watchResolved } from "./watcher.ts";
import { ConsumerFailure } from "./_failure_kind.ts";
import {
  OBSERVER_METHODS,
  type ResolvedWatcherOptions,
  resolveWatcherOptions,
} from "./_resolve_watcher_options.ts";
import type {
  ErrorPhase,
  WatcherObserver,
  WatcherOptions,
  WatcherState,
} from "./watcher_options.ts";
import { WATCHER_DEFAULTS } from "./watcher_defaults.ts";
import { loadCheckpoint, type LoadedCheckpoint } from "../checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../checkpoint/save_checkpoint.ts";
import type { ResourceIdentity } from "../transport/resource_identity.ts";
import { abortable } from "../async/_abortable.ts";
import {
  type CheckpointSaved,
  type ReflectorCheckpointOptions,
  resolveCheckpointOptions,
  type ResolvedCheckpointOptions,
  type SyncedFrom,
} from "./reflector_checkpoint.ts";
import { ReflectorStateError } from "./reflector_state_error.ts";
import { CheckpointResumeError } from "./checkpoint_resume_error.ts";
import { ChangesSince } from "./_changes_since.ts";
import { CheckpointSaveTimeoutError } from "./checkpoint_save_timeout_error.ts";

/**
 * Options of {@linkcode Reflector}: the watcher's options (without `signal`) plus these.
 */
export interface ReflectorOptions extends Omit<WatcherOptions, "signal"> {
  /** Names the reflector in logs and metrics. Default: `"reflector"`. */
  name?: string;
  /**
   * Every this many ms, call `store.resync()` (no I/O). 0 disables. Periods
   * longer than `setTimeout` takes (about 24.8 days) work as written. Default: `0`.
   */
  resyncPeriodMs?: number;
  /** Asked before each resync; `false` skips that one. Default: always resync. */
  shouldResync?: () => boolean;
  /**
   * Load the store from a checkpoint on start and save it there (see
   * {@linkcode ReflectorCheckpointOptions}). Default: none.
   */
  checkpoint?: ReflectorCheckpointOptions;
}

/**
 * What a reflector is doing, for health checks: whether its store is
 * current (a watch is open), since when, and what went wrong last.
 * `hasSynced()` keeps client-go's meaning (the store once held a complete
 * list); this is what tells a stale store from a current one.
 */
export interface ReflectorStatus {
  /**
   * `"listing"`, `"connecting"` (a watch requested), `"watching"` (a watch
   * accepted: the store is current up to its events), `"waiting"` (backing
   * off after a failure), or `"stopped"` (not running).
   */
  state: WatcherState;
  /** `state === "watching"`. */
  watching: boolean;
  /** When `watching` last changed, in the clock's milliseconds: watching since, or stale since. */
  since: number;
  /** When the last event or bookmark arrived, in the clock's milliseconds. */
  lastEventAt?: number;
  /** The last error handed to `onError`, with its phase and time. */
  lastError?: { error: unknown; phase: ErrorPhase; at: number };
}

/**
 * Options of {@linkcode Reflector.run}.
 */
export interface RunOptions {
  /** Stops the reflector: `run()` then resolves. Required. */
  signal: AbortSignal;
}

/**
 * Keeps a {@linkcode Store} equal to the server's objects: a port of
 * client-go's `Reflector`. It joins a {@linkcode watcher} to a store: each
 * LIST replaces the store atomically, each change is applied in order,
 * bookmarks only advance `lastSyncResourceVersion`. Every error goes to
 * `onError` and never ends `run()`: only its signal does. A store that
 * fails to apply an event (its `update` or `delete` throws) is reported
 * with phase `"store"`, and the reflector relists after the backoff, since
 * the store may have missed a change; a `replace` that leaves out objects
 * it rejects (a key or index function throwing) is reported and kept, as
 * the rest is complete. Invalid options throw at construction.
 *
 * Stopping follows the library's one abort rule: whatever runs until
 * stopped (`run()`, an informer's `run()` and `changes()`, a factory's
 * `start()`, `watcher()`) ends quietly when its own signal aborts
 * (`run()` resolves, a `for await` loop ends); a wait for something that
 * has not happened yet (`waitForSync({ signal })`, `waitForCacheSync`,
 * `catchUp`) rejects with the signal's reason when it is abandoned.
 *
 * @example Sync a store, then follow the changes
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   Indexer,
 *   KubeClient,
 *   metaNamespaceKeyFunc,
 *   Reflector,
 *   resourceListerWatcher,
 * } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "default" },
 * });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const store = new Indexer(metaNamespaceKeyFunc);
 * const reflector = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * assert.deepEqual(store.listKeys(), ["default/a"]);
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "b", namespace: "default" },
 * });
 * // the watch brings it
 * while (!store.getByKey("default/b")) await new Promise((r) => setTimeout(r, 5));
 * assert.equal(reflector.lastSyncResourceVersion, server.resourceVersion);
 * ac.abort();
 * await done; // run() resolves once the reflector has stopped
 * await server.close();
 * ```
 */
export class Reflector<T extends KubeObjectLike = KubeObject> {
  /** The reflector's name (logs, metrics). */
  readonly name: string;
  /** Resolves when the store first holds a complete list. Never rejects. */
  readonly synced: Promise<void>;
  readonly #lw: ListerWatcher<T>;
  readonly #store: Store<T>;
  readonly #options: ResolvedWatcherOptions;
  readonly #resyncPeriodMs: number;
  readonly #shouldResync: (() => boolean) | undefined;
  #markSynced!: () => void;
  #hasSynced = false;
  #lastSyncResourceVersion = "";
  readonly #checkpoint: ResolvedCheckpointOptions | undefined;
  #syncedFrom: SyncedFrom | undefined;
  /** The checkpoint's version, for the first watch after a restore ("" otherwise). */
  #resumeFrom = "";
  /** The lister-watcher's identity once it knew the cluster (until then, asked at each use). */
  #identity: ResourceIdentity | undefined;
  /** The save in progress (saves run one at a time). */
  #saving: Promise<void> = Promise.resolve();
  /** What changed since the checkpoint was last saved or loaded (with a checkpoint option only). */
  readonly #changes = new ChangesSince<T>();
  /** Whether the stored checkpoint failed to load (its next save replaces it whatever its version). */
  #replaceStored = false;
  /** The version of the checkpoint the store was restored from ("" when none). */
  #restoredFrom = "";
  #running = false;
  #status: ReflectorStatus;
  /** `status.lastEventAt` was set in the current synchronous run of events. */
  #eventStamped = false;
  readonly #waiters = new Set<{ settle: (err?: Error) => void }>();

  /**
   * Creates a reflector; it does nothing until {@linkcode Reflector.run}.
   *
   * @param lw Lists and watches the resource, for example {@linkcode resourceListerWatcher}.
   * @param store Receives the objects, for example an {@linkcode Indexer}.
   * @param options Default: `{}` (every default of {@linkcode ReflectorOptions}).
   * @throws {TypeError | RangeError} when an argument or an option is invalid.
   */
  constructor(lw: ListerWatcher<T>, store: Store<T>, options: ReflectorOptions = {}) {
    if (!lw || typeof lw.list !== "function" || typeof lw.watch !== "function") {
      throw new TypeError("Reflector: the first argument must be a ListerWatcher (list and watch)");
    }
    if (!store || typeof store.replace !== "function") {
      throw new TypeError("Reflector: the second argument must be a Store");
    }
    const {
      name = "reflector",
      resyncPeriodMs = WATCHER_DEFAULTS.resyncPeriodMs,
      shouldResync,
      checkpoint,
      ...rest
    } = options;
    this.#checkpoint = resolveCheckpointOptions(checkpoint);
    if (
      typeof resyncPeriodMs !== "number" || !Number.isFinite(resyncPeriodMs) || resyncPeriodMs < 0
    ) {
      throw new RangeError(`Reflector: resyncPeriodMs must be >= 0, got ${resyncPeriodMs}`);
    }
    if (shouldResync !== undefined && typeof shouldResync !== "function") {
      throw new TypeError("Reflector: shouldResync must be a function");
    }
    this.name = name;
    this.#lw = lw;
    this.#store = store;
    // A relist hands the store's own copy of each unchanged object on (see Store.unchanged).
    const reuseListed = rest.reuseListed !== undefined ? rest.reuseListed : reuseFrom(store);
    const resolved = resolveWatcherOptions(
      { ...rest, reuseListed, observer: this.#statusObserver(rest.observer) },
      name,
    );
    const onError = resolved.onError;
    this.#options = {
      ...resolved,
      onError: (error, phase) => {
        this.#status.lastError = { error, phase, at: resolved.clock.now() };
        onError(error, phase, { name });
      },
    };
    this.#status = { state: "stopped", watching: false, since: this.#options.clock.now() };
    this.#lastSyncResourceVersion = this.#options.initialResourceVersion; // the option, until a sync
    this.#resyncPeriodMs = resyncPeriodMs;
    this.#shouldResync = shouldResync;
    this.synced = new Promise((resolve) => (this.#markSynced = resolve));
  }

  /**
   * Where the synced store's state came from: `"checkpoint"` from loading a
   * checkpoint until the first watch event or bookmark confirms it, then
   * `"server"` (also after any list); `undefined` before the first sync.
   */
  get syncedFrom(): SyncedFrom | undefined {
    return this.#syncedFrom;
  }

  /**
   * Saves the store to the `checkpoint` option's storage: its objects and the
   * resourceVersion they are exact at, taken at one instant (no event is
   * applied in between), then written in chunks that yield to the event loop.
   * Saves run one at a time. Rejects with a {@linkcode ReflectorStateError}
   * when the reflector has no `checkpoint` option (reason `no-checkpoint`)
   * or has not synced (`not-synced`), with the storage's error, or
   * with `signal.reason` as soon as `signal` aborts, also while an earlier
   * save or a storage that ignores its signal keeps it waiting.
   */
  saveCheckpoint(options: { signal?: AbortSignal } = {}): Promise<CheckpointSaved> {
    const cp = this.#checkpoint;
    if (!cp) {
      return Promise.reject(new ReflectorStateError(this.name, "no-checkpoint"));
    }
    if (!this.#hasSynced) {
      return Promise.reject(new ReflectorStateError(this.name, "not-synced"));
    }
    const { signal } = options;
    const run = async (): Promise<CheckpointSaved> => {
      signal?.throwIfAborted();
      const identity = await this.#identityOf(cp, signal);
      // one instant: the objects, the version they are exact at, what changed since the last save
      const items = this.#store.list();
      const resourceVersion = this.#lastSyncResourceVersion;
      const taken = this.#changes.snapshot();
      const { count, bytes, written } = await saveCheckpoint(
        cp.storage,
        cp.key,
        {
          identity,
          resourceVersion,
          items,
          changes: taken.since === undefined
            ? undefined
            : { since: taken.since, objects: taken.objects },
          // a checkpoint that could not be loaded is replaced, even at this version
          replace: this.#replaceStored,
        },
        { signal },
      );
      // nothing written: the stored version stays what the changes are since
      if (written !== "none") this.#changes.saved(taken, resourceVersion);
      if (written !== "none") this.#replaceStored = false;
      return { resourceVersion, count, bytes, written };
    };
    // waits for the save before it, but no longer than its own signal allows
    const saved = abortable(this.#saving, signal).then(run);
    this.#saving = saved.then(() => {}, () => {});
    return saved;
  }

  /** The resourceVersion the store reflects: of the last list, event or bookmark applied. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
  }

  /** What the reflector is doing now: watching or not, since when, the last event and error. */
  get status(): ReflectorStatus {
    return { ...this.#status };
  }

  /** True once the store has held a complete list. */
  hasSynced(): boolean {
    return this.#hasSynced;
  }

  /**
   * Waits for the first sync. Rejects with `signal.reason` if the signal
   * aborts first, and with a {@linkcode ReflectorStateError} (reason
   * `stopped`) if a `run()` ends before the first sync. A waiter that gives up leaves nothing behind.
   */
  waitForSync(options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options;
    if (this.#hasSynced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(waiter);
        reject(signal!.reason);
      };
      const waiter = {
        settle: (err?: Error) => {
          signal?.removeEventListener("abort", onAbort);
          if (err) reject(err);
          else resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  #settleWaiters(err?: Error): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) w.settle(err);
  }

  /**
   * Lists and watches until `signal` aborts, then resolves (never rejects
   * for a recoverable error). Only one `run` at a time: a second one while
   * the first goes on rejects with a {@linkcode ReflectorStateError}
   * (reason `running`).
   */
  async run(options: RunOptions): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("Reflector.run: options.signal is required");
    }
    if (this.#running) throw new ReflectorStateError(this.name, "running");
    if (signal.aborted) return;
    this.#running = true;
    const { controller, dispose } = childAbortController(signal);
    const resync = this.#resyncPeriodMs > 0
      ? this.#resyncLoop(controller.signal)
      : Promise.resolve();
    const cp = this.#checkpoint;
    const saves = cp && cp.saveIntervalMs > 0
      ? this.#saveLoop(cp.saveIntervalMs, controller.signal)
      : Promise.resolve();
    try {
      if (cp && !this.#hasSynced) await this.#restore(cp, signal);
      await this.#watchLoop(signal);
    } finally {
      controller.abort();
      dispose();
      await resync;
      await saves;
      if (cp?.saveOnStop && this.#hasSynced) await this.#saveOnStop(cp.key, cp.stopSaveTimeoutMs);
      this.#running = false;
      this.#options.observer.state?.({ state: "stopped" });
      if (!this.#hasSynced) {
        this.#settleWaiters(new ReflectorStateError(this.name, "stopped"));
      }
    }
  }

  /**
   * Runs the watcher into the store until `signal` aborts. The watcher
   * handles every failure of its own; a store that could not apply an event
   * is reported here and handed back to the watcher (a relist after the
   * backoff). Should the watcher ever throw (a bug), it is reported and
   * started again after the backoff, from the last version applied.
   */
  async #watchLoop(signal: AbortSignal): Promise<void> {
    const { clock, backoff, observer } = this.#options;
    while (!signal.aborted) {
      const it = watchResolved(this.#lw, {
        ...this.#options,
        signal,
        initialResourceVersion: this.#lastSyncResourceVersion,
        resumeResourceVersion: this.#resumeFrom,
      });
      this.#resumeFrom = ""; // a restart after a failure lists
      try {
        // An event the store could not apply is handed back to the watcher,
        // whose recovery rules then relist after the backoff.
        let failure: ConsumerFailure | undefined;
        // The read's result is dropped before the next is awaited, and its
        // events are applied in a method of their own: a variable of this
        // loop would keep the last batch (after a list, every listed object)
        // while the watch waits for its next read.
        let r: IteratorResult<WatcherEvent<T>[], void> | undefined;
        while (true) {
          r = failure ? await it.throw(failure) : await it.next();
          if (r.done) break;
          failure = this.#applyBatch(r.value);
          r = undefined;
        }
      } catch (err) {
        if (signal.aborted) return;
        this.#report(err, "watch"); // the watcher never throws but on abort: a bug of ours
      } finally {
        await it.return(undefined).catch(() => {});
      }
      if (signal.aborted) return;
      observer.relist?.("watch-failed");
      const ms = backoff.next();
      observer.state?.({ state: "waiting", waitMs: ms });
      try {
        await delay(ms, signal, clock);
      } catch {
        return; // aborted
      }
    }
  }

  /**
   * Applies a read's events in order; what the store could not apply ends
   * the batch and is handed back to the watcher.
   */
  #applyBatch(events: WatcherEvent<T>[]): ConsumerFailure | undefined {
    try {
      for (const ev of events) this.#apply(ev);
      return undefined;
    } catch (err) {
      // the events before it are applied, the rest of the read is not:
      // a relist asks for nothing older than the last one applied
      this.#report(err, "store");
      return new ConsumerFailure(err, this.#lastSyncResourceVersion);
    }
  }

  /**
   * Applies one event to the store. A `replace` that throws has still
   * replaced everything it did not reject (the Store contract): reported,
   * and the list counts as applied. An `update` or `delete` that throws has
   * changed nothing: the error propagates, and the reflector relists.
   */
  #apply(ev: WatcherEvent<T>): void {
    switch (ev.type) {
      case "LIST":
        if (this.#syncedFrom === "checkpoint") {
          this.#report(
            new CheckpointResumeError(this.#checkpoint?.key ?? "", this.#lastSyncResourceVersion),
            "checkpoint",
          );
        }
        this.#changes.listed();
        // a list behind the checkpoint it started from (an etcd restored from a
        // backup): the stored objects are ahead of the server, replace them
        if (isBehind(ev.resourceVersion, this.#restoredFrom)) this.#replaceStored = true;
        try {
          this.#store.replace(ev.items, ev.resourceVersion);
        } catch (err) {
          this.#report(err, "store");
        }
        break;
      case "ADDED":
      case "MODIFIED":
        // an ADDED for a known key (a replayed event) is an update: no duplicate
        this.#store.update(ev.object);
        // what the store keeps (an informer's transform applied), as its snapshot holds it
        if (this.#checkpoint) this.#changes.record(this.#store.get(ev.object) ?? ev.object, false);
        break;
      case "DELETED":
        this.#store.delete(ev.object);
        if (this.#checkpoint) this.#changes.record(ev.object, true);
        break;
      case "BOOKMARK":
        break;
    }
    this.#lastSyncResourceVersion = ev.resourceVersion;
    this.#syncedFrom = "server"; // a list, or an event or bookmark after the checkpoint
    if (ev.type === "LIST" && !this.#hasSynced) {
      this.#hasSynced = true;
      this.#markSynced();
      this.#settleWaiters();
    }
  }

  /**
   * Loads the checkpoint into the store (silently for stores that can
   * restore) and marks it synced from it; the first watch resumes from its
   * version. A missing checkpoint is a plain start; an unusable one (another
   * identity, corrupt, truncated, newer format) or a storage failure is
   * reported and ignored.
   */
  async #restore(cp: ResolvedCheckpointOptions, signal: AbortSignal): Promise<void> {
    let loaded: LoadedCheckpoint<T> | undefined;
    try {
      const identity = await this.#identityOf(cp, signal);
      loaded = await loadCheckpoint<T>(cp.storage, cp.key, identity, { signal });
    } catch (err) {
      if (signal.aborted) return;
      this.#report(err, "checkpoint");
      this.#replaceStored = true;
      return;
    }
    if (!loaded || signal.aborted) return;
    try {
      if (this.#store.restore) this.#store.restore(loaded.items, loaded.resourceVersion);
      else this.#store.replace(loaded.items, loaded.resourceVersion);
    } catch (err) {
      this.#report(err, "store"); // what the store accepted is in it (the Store contract)
    }
    this.#lastSyncResourceVersion = loaded.resourceVersion;
    this.#changes.restored(loaded.resourceVersion);
    this.#restoredFrom = loaded.resourceVersion;
    this.#resumeFrom = loaded.resourceVersion;
    this.#syncedFrom = "checkpoint";
    this.#hasSynced = true;
    this.#markSynced();
    this.#settleWaiters();
  }

  /**
   * The identity checkpoints must match: the option's, else the
   * lister-watcher's, raced against `signal`. Kept once it has the cluster's
   * UID; an answer without one (its read failed: a 503 at start-up, no
   * permission) is used but not kept, so that the next load or save asks
   * again and a later checkpoint records the cluster.
   */
  async #identityOf(
    cp: ResolvedCheckpointOptions,
    signal?: AbortSignal,
  ): Promise<ResourceIdentity> {
    if (cp.identity) return cp.identity;
    if (this.#identity) return this.#identity;
    if (!this.#lw.identity) {
      throw new TypeError(
        `Reflector ${this.name}: checkpoint.identity is required with a lister-watcher that has no identity()`,
      );
    }
    const identity = await abortable(this.#lw.identity({ signal }), signal);
    if (identity?.cluster) this.#identity = identity;
    return identity;
  }

  async #saveLoop(ms: number, signal: AbortSignal): Promise<void> {
    const { clock } = this.#options;
    try {
      while (true) {
        await delay(ms, signal, clock);
        if (!this.#hasSynced) continue;
        await this.saveCheckpoint({ signal }).catch((err) => {
          if (!signal.aborted) this.#report(err, "checkpoint");
        });
      }
    } catch {
      // aborted: the only way out
    }
  }

  /** The save when `run()` ends, abandoned (and reported) after `timeoutMs`. */
  async #saveOnStop(key: string, timeoutMs: number): Promise<void> {
    const ac = new AbortController();
    const timer = this.#options.clock.setTimeout(
      () => ac.abort(new CheckpointSaveTimeoutError(key, timeoutMs)),
      timeoutMs,
    );
    try {
      await this.saveCheckpoint({ signal: ac.signal });
    } catch (err) {
      this.#report(err, "checkpoint");
    } finally {
      this.#options.clock.clearTimeout(timer);
    }
  }

  /** Wraps the user's observer so that the reflector's status follows the watcher. */
  #statusObserver(user: WatcherObserver | undefined): WatcherObserver {
    const call = <K extends keyof WatcherObserver>(key: K, ...args: unknown[]) => {
      try {
        (user?.[key] as ((...a: unknown[]) => void) | undefined)?.apply(user, args);
      } catch { /* observers must not break the reflector */ }
    };
    const forward: WatcherObserver = {};
    for (const key of OBSERVER_METHODS) {
      (forward as Record<string, unknown>)[key] = (...args: unknown[]) => call(key, ...args);
    }
    forward.state = (info) => {
      this.#setState(info.state);
      call("state", info);
    };
    forward.event = (type, rv) => {
      // The events of one network read are handed on in one synchronous
      // run: they arrived together, so the clock is read once per run.
      if (!this.#eventStamped) {
        this.#eventStamped = true;
        queueMicrotask(() => (this.#eventStamped = false)); // (before a clock that may throw)
        this.#status.lastEventAt = this.#options.clock.now();
      }
      try {
        user?.event?.(type, rv); // once per event: no argument arrays
      } catch { /* observers must not break the reflector */ }
    };
    return forward;
  }

  #setState(state: ReflectorStatus["state"]): void {
    const watching = state === "watching";
    const s = this.#status;
    if (watching !== s.watching) s.since = this.#options.clock.now();
    s.state = state;
    s.watching = watching;
  }

  async #resyncLoop(signal: AbortSignal): Promise<void> {
    const { clock } = this.#options;
    try {
      while (true) {
        await delay(this.#resyncPeriodMs, signal, clock);
        if (!this.#hasSynced) continue;
        let go = true;
        try {
          go = this.#shouldResync?.() ?? true;
        } catch (err) {
          this.#report(err, "store");
          go = false;
        }
        if (!go) continue;
        try {
          this.#store.resync();
        } catch (err) {
          this.#report(err, "store");
        }
      }
    } catch {
      // aborted: the only way out
    }
  }

  #report(err: unknown, phase: ErrorPhase): void {
    try {
      this.#options.onError(err, phase);
    } catch { /* ignored */ }
  }
}

/**
 * The default `reuseListed` of a reflector into `store`: its `unchanged`, if
 * it has one. A store's throw reuses nothing (the listed item is kept), so a
 * store of someone else's cannot fail a list.
 */
function reuseFrom<T extends KubeObjectLike>(
  store: Store<T>,
): ((listed: KubeObjectLike) => KubeObjectLike | undefined) | undefined {
  if (typeof store.unchanged !== "function") return undefined;
  return (listed) => {
    try {
      return store.unchanged!(listed as T);
    } catch {
      return undefined;
    }
  };
}

/** Whether integer version `rv` is below `than` (false when either is not an integer). */
function isBehind(rv: string, than: string): boolean {
  const integer = (v: string) => /^\d{1,30}$/.test(v) ? BigInt(v) : undefined;
  const a = integer(rv), b = integer(than);
  return a !== undefined && b !== undefined && a < b;
}
