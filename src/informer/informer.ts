/**
 * Shared informers: a reflector, a cache and event handlers.
 *
 * @module
 */
import { isExpired } from "../api/predicates.ts";
import type { CheckpointSaved, SyncedFrom } from "../reflector/reflector_checkpoint.ts";
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { KeyFunc } from "../cache/key_func.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import { forEachKeyed } from "../cache/_keyed_entries.ts";
import {
  type MetricsProvider,
  noopMetrics,
  type ReflectorMetrics,
} from "../metrics/reflector_metrics.ts";
import { Reflector, type ReflectorStatus, type RunOptions } from "../reflector/reflector.ts";
import type { ErrorHandler, ErrorPhase, WatcherObserver } from "../reflector/watcher_options.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { changeIterator } from "./_change_iterator.ts";
import { fanOut } from "./_fan_out_observer.ts";
import type { Notification } from "./_handler_queue.ts";
import { Listener } from "./_listener.ts";
import type { HandlerRegistration } from "./handler_registration.ts";
import type { InformerChange } from "./informer_change.ts";
import { InformerStore } from "./informer_store.ts";
import { defaultLogger, log, type Logger, messageOf, resolveLogger } from "./logger.ts";
import { Lister, type ReadonlyIndexer } from "./lister.ts";
import type { InformerOptions } from "./informer_options.ts";
import type { HandlerOptions, ResourceEventHandler } from "./resource_event_handler.ts";

/**
 * A shared index informer (client-go's `SharedIndexInformer`): one
 * {@linkcode Reflector} keeps one cache, and any number of handlers hear of
 * every change. See {@linkcode InformerStore} for which store call becomes
 * which change (relists give tombstones, resyncs give `update(obj, obj)`,
 * bookmarks give nothing).
 *
 * Delivery: each handler has its own queue and is called for one change at
 * a time, in order; an async handler is awaited first. Handlers are
 * isolated: a throw or rejection goes to `onError` (phase `"handler"`). A
 * handler added after the cache synced first gets every current object as an
 * add.
 *
 * Queue policy: a store call cannot block, so a slow handler's queue grows.
 * Up to `maxQueueLength` (default 1000) waiting changes are kept exactly,
 * not counting the adds of an initial list (one per distinct object, so
 * bounded by the list; a handler's initial list arrives whole and in order).
 * Beyond it the queue coalesces per object: the waiting changes of one
 * object merge into at most a delete (of the state the handler last saw)
 * followed by an add or update with the newest state. Memory is then bounded
 * by the number of distinct objects, no object's latest state and no delete
 * is ever lost, and changes of one object stay in order; only intermediate
 * states are skipped (a controller reconciles to the latest state anyway).
 * Objects are then delivered in the order of their oldest waiting change.
 * Dropping the oldest changes instead would lose deletes. The queue returns
 * to exact order once drained. Each overflow is counted in metrics
 * (`handlerQueueOverflow`).
 *
 * Stopping: when `run()`'s signal aborts, waiting changes are dropped and
 * `run()` resolves once every handler call in progress has settled (an
 * async handler that never settles therefore delays it: give long handler
 * work its own deadline).
 *
 * @example Event handlers
 * ```ts
 * import assert from "node:assert/strict";
 * import { Informer, KubeClient, resourceListerWatcher } from "../../mod.ts";
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
 * const informer = new Informer(lw, { name: "configmaps", expectedKind: "ConfigMap" });
 * const log: string[] = [];
 * let deleted!: () => void;
 * const gone = new Promise<void>((resolve) => deleted = resolve);
 * informer.addEventHandler({
 *   onAdd: (cm, isInInitialList) => void log.push(`add ${cm.metadata.name} ${isInInitialList}`),
 *   onDelete: () => {
 *     log.push("delete");
 *     deleted();
 *   },
 * });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * await informer.waitForSync();
 * assert.equal(informer.lister().get("default", "a")?.metadata.name, "a");
 * server.delete(a);
 * await gone;
 * assert.deepEqual(log, ["add a true", "delete"]);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 *
 * @example Iterate over the changes
 * ```ts
 * import assert from "node:assert/strict";
 * import { Informer, KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * const cm = (name: string) => ({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name, namespace: "default" },
 * });
 * server.create(cm("a"));
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const informer = new Informer(lw, { name: "configmaps" });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * const seen: string[] = [];
 * for await (const change of informer.changes()) {
 *   seen.push(change.type === "synced" ? "synced" : `${change.type} ${change.key}`);
 *   if (change.type === "synced") server.create(cm("b"));
 *   // the iteration ends only when the informer stops: leave it when done
 *   if (change.type === "add" && change.key === "default/b") break;
 * }
 * assert.deepEqual(seen, ["add default/a", "synced", "add default/b"]);
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 */
export class Informer<T extends KubeObjectLike = KubeObject> {
  /** The informer's name (logs, metrics). */
  readonly name: string;
  readonly #store: InformerStore<T>;
  readonly #reflector: Reflector<T>;
  readonly #keyFunc: KeyFunc<T>;
  readonly #onError: ErrorHandler;
  readonly #logger: Logger;
  readonly #maxQueueLength: number;
  readonly #provider: MetricsProvider;
  /** Each listener, with the close callback of a `changes()` iterator. */
  readonly #listeners = new Map<Listener<T>, (() => void) | undefined>();
  /** The listeners as an array, made again after a change (one loop per change, no iterator). */
  #listenerArray: Listener<T>[] | undefined;
  #metrics: ReflectorMetrics | undefined;
  #seq = 0;
  #started = false;
  #stopped = false;

  /**
   * Creates an informer; it does nothing until {@linkcode Informer.run}.
   *
   * @param lw Lists and watches the resource, for example {@linkcode resourceListerWatcher}.
   * @param options Default: `{}` (every default of {@linkcode InformerOptions}).
   * @throws {TypeError | RangeError} for invalid options.
   */
  constructor(lw: ListerWatcher<T>, options: InformerOptions<T> = {}) {
    const {
      transform,
      keyFunc = metaNamespaceKeyFunc as KeyFunc<T>,
      indexers,
      maxQueueLength = 1000,
      replayCheckpointAsAdds = false,
      logger: loggerOption,
    } = options;
    const {
      metrics = noopMetrics,
      onError,
      observer = {},
      transform: _t,
      keyFunc: _k,
      indexers: _i,
      maxQueueLength: _m,
      replayCheckpointAsAdds: _r,
      logger: _l,
      ...reflectorOptions
    } = options;
    if ((options as { reuseListed?: unknown }).reuseListed !== undefined) {
      // its cache decides what a relist reuses (see InformerStore.unchanged)
      throw new TypeError("Informer: reuseListed is a Reflector option, not an informer's");
    }
    if (!Number.isInteger(maxQueueLength) || maxQueueLength < 1) {
      throw new RangeError(
        `Informer: maxQueueLength must be an integer >= 1, got ${maxQueueLength}`,
      );
    }
    if (typeof metrics?.reflector !== "function") {
      throw new TypeError("Informer: metrics must be a MetricsProvider");
    }
    if (onError !== undefined && typeof onError !== "function") {
      throw new TypeError("Informer: onError must be a function");
    }
    this.name = options.name ?? "informer";
    this.#keyFunc = keyFunc;
    this.#maxQueueLength = maxQueueLength;
    this.#provider = metrics;
    const logger = this.#logger = resolveLogger(loggerOption, "Informer");
    // The user's handler is told which informer reports; without one, the logger warns.
    const context = { name: this.name };
    this.#onError = onError
      ? (err: unknown, phase: ErrorPhase) => onError(err, phase, context)
      : (err: unknown, phase: ErrorPhase) =>
        // a 410 is routine: the relist that recovers it is logged at info
        log(
          logger,
          isExpired(err) ? "debug" : "warn",
          `[${this.name}] ${phase}: ${messageOf(err)}`,
          {
            name: this.name,
            phase,
            error: err,
          },
        );
    const relistLog: WatcherObserver = {
      relist: (reason) => {
        if (reason === "initial" || !this.#reflector.hasSynced()) return;
        log(logger, "info", `[${this.name}] relisting (${reason})`, { name: this.name, reason });
      },
    };
    this.#store = new InformerStore({
      transform,
      keyFunc,
      indexers,
      replayRestoreAsAdds: replayCheckpointAsAdds,
      onChange: (c) => this.#broadcast(c),
    });
    this.#reflector = new Reflector(lw, this.#store, {
      ...reflectorOptions,
      name: this.name,
      onError: this.#onError,
      observer: fanOut(
        logger === defaultLogger ? observer : fanOut(observer, () => relistLog),
        () => this.#metrics,
      ),
    });
  }

  /**
   * Where the synced cache came from: `"checkpoint"` until the first event
   * or bookmark after loading one confirms it, then `"server"` (see the
   * `checkpoint` option); `undefined` before the first sync.
   */
  get syncedFrom(): SyncedFrom | undefined {
    return this.#reflector.syncedFrom;
  }

  /** Saves the cache to the `checkpoint` option's storage (see {@linkcode Reflector.saveCheckpoint}). */
  saveCheckpoint(options: { signal?: AbortSignal } = {}): Promise<CheckpointSaved> {
    return this.#reflector.saveCheckpoint(options);
  }

  /** The cache, read-only. */
  get indexer(): ReadonlyIndexer<T> {
    return this.#store;
  }

  /** The resourceVersion the cache reflects. */
  get lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion;
  }

  /**
   * Whether the cache is current (a watch is open), since when, the last
   * event and error: what a health check reads (see {@linkcode ReflectorStatus}).
   */
  get status(): ReflectorStatus {
    return this.#reflector.status;
  }

  /** True once the cache holds a complete list (handlers may still be catching up). */
  hasSynced(): boolean {
    return this.#reflector.hasSynced();
  }

  /** Resolves when the cache first holds a complete list; rejects with `signal.reason` on abort. */
  waitForSync(options: { signal?: AbortSignal } = {}): Promise<void> {
    return this.#reflector.waitForSync(options);
  }

  /** A {@linkcode Lister} over the cache. */
  lister(): Lister<T> {
    return new Lister(this.#store);
  }

  /**
   * Registers a handler; it can be added and removed at any time. Added
   * after the cache synced, it first gets every current object as an add
   * (`isInInitialList` true). Added after the informer stopped, it is
   * returned already removed.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions = {},
  ): HandlerRegistration {
    return this.#addListener(handler, options, undefined);
  }

  /**
   * The changes as an async iterator: `add`, `update`, `delete`, and one
   * `synced` after the initial adds. A slow consumer is handled as a slow
   * handler (see the queue policy). Ends when the informer stops, and
   * quietly when `signal` aborts (the library's one abort rule).
   */
  changes(options: { signal?: AbortSignal } = {}): AsyncIterableIterator<InformerChange<T>> {
    const subscribe = (handler: ResourceEventHandler<T>, onClose: () => void) =>
      this.#addListener(handler, {}, onClose);
    return changeIterator<T>(subscribe, this.#keyFunc, options.signal);
  }

  /**
   * Runs the reflector until `signal` aborts, then stops every handler and
   * resolves. An informer runs once: a second call throws.
   */
  async run(options: RunOptions): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("Informer.run: options.signal is required");
    }
    if (this.#started) throw new Error(`Informer ${this.name}: run() was already called`);
    this.#started = true;
    this.#metrics = signal.aborted ? undefined : this.#provider.reflector(this.name, {
      storeSize: () => this.#store.size,
      handlerQueueDepth: () => {
        let depth = 0;
        for (const l of this.#listeners.keys()) depth += l.pending;
        return depth;
      },
    });
    try {
      await this.#reflector.run({ signal });
    } finally {
      this.#stopped = true;
      const listeners = [...this.#listeners];
      this.#listeners.clear();
      this.#listenerArray = undefined;
      const settled = listeners.map(([l]) => l.stop());
      for (const [, close] of listeners) close?.(); // releases iterators' waiting handler calls
      await Promise.all(settled);
      this.#observe((m) => m.dispose());
      this.#metrics = undefined;
    }
  }

  #addListener(
    handler: ResourceEventHandler<T>,
    options: HandlerOptions,
    onClose: (() => void) | undefined,
  ): HandlerRegistration {
    if (typeof handler !== "object" || handler === null) {
      throw new TypeError("Informer.addEventHandler: handler must be an object of callbacks");
    }
    const { maxQueueLength = this.#maxQueueLength } = options ?? {};
    if (!Number.isInteger(maxQueueLength) || maxQueueLength < 1) {
      throw new RangeError(
        `Informer.addEventHandler: maxQueueLength must be an integer >= 1, got ${maxQueueLength}`,
      );
    }
    const listener = new Listener<T>(handler, maxQueueLength, {
      report: (err) => this.#report(err, "handler"),
      timed: () => this.#metrics?.handlerDone !== undefined,
      handlerDone: (durationMs, failed) =>
        this.#observe((m) => m.handlerDone?.({ durationMs, failed })),
      overflow: () => this.#observe((m) => m.handlerQueueOverflow?.()),
      detach: (l) => {
        this.#listeners.delete(l as unknown as Listener<T>);
        this.#listenerArray = undefined;
      },
    });
    if (this.#stopped) {
      listener.stop();
      return listener;
    }
    this.#listeners.set(listener, onClose);
    this.#listenerArray = undefined;
    if (this.#store.hasSynced()) {
      this.#store[forEachKeyed]((key, object) =>
        listener.enqueue({ type: "add", key, object, initial: true, seq: ++this.#seq })
      );
      listener.markInitial(this.#seq);
    }
    return listener;
  }

  #broadcast(change: InformerChange<T>): void {
    if (change.type === "synced") {
      log(this.#logger, "info", `[${this.name}] synced: ${this.#store.size} objects`, {
        name: this.name,
        objects: this.#store.size,
      });
      for (const l of this.#listeners.keys()) l.markInitial(this.#seq);
      return;
    }
    const seq = ++this.#seq;
    if (this.#listeners.size === 0) return; // nothing to build a notification for
    // literal notifications (one shape per type): no spread, once per change
    const n: Notification<T> = change.type === "add"
      ? {
        type: "add",
        key: change.key,
        object: change.object,
        initial: change.isInInitialList,
        seq,
      }
      : change.type === "update"
      ? { type: "update", key: change.key, oldObject: change.oldObject, object: change.object, seq }
      : { type: "delete", key: change.key, object: change.object, seq };
    const listeners = this.#listenerArray ??= [...this.#listeners.keys()];
    for (let i = 0; i < listeners.length; i++) listeners[i].enqueue(n);
  }

  #report(err: unknown, phase: ErrorPhase): void {
    try {
      this.#onError(err, phase);
    } catch { /* an error handler's own failure is ignored */ }
  }

  #observe(f: (m: ReflectorMetrics) => void): void {
    if (!this.#metrics) return;
    try {
      f(this.#metrics);
    } catch { /* metrics must never break the informer */ }
  }
}
