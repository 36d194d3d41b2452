import type { KubeObject } from "../api/types.ts";
import type { Store } from "../cache/store.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { childAbortController, delay } from "./_async.ts";
import { watcher, type WatcherEvent } from "./watcher.ts";
import { type ResolvedWatcherOptions, resolveWatcherOptions } from "./_resolve_watcher_options.ts";
import type { ErrorPhase, WatcherOptions } from "./watcher_options.ts";

/**
 * Options of {@linkcode Reflector}: the watcher's options (without `signal`) plus these.
 *
 * @example
 * ```ts
 * import { Indexer, metaNamespaceKeyFunc, Reflector } from "../../mod.ts";
 * import type { ListerWatcher, ReflectorOptions } from "../../mod.ts";
 * const lw: ListerWatcher = {
 *   list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
 *   async *watch() {},
 * };
 * const options: ReflectorOptions = {
 *   name: "configmaps",
 *   expectedKind: "ConfigMap",
 *   resyncPeriodMs: 10 * 60_000,
 *   shouldResync: () => true,
 *   onError: (err, phase) => console.warn(phase, err),
 * };
 * const reflector = new Reflector(lw, new Indexer(metaNamespaceKeyFunc), options);
 * console.log(reflector.name); // configmaps
 * ```
 */
export interface ReflectorOptions extends Omit<WatcherOptions, "signal"> {
  /** Names the reflector in logs and metrics. Default: `"reflector"`. */
  name?: string;
  /** Every this many ms, call `store.resync()` (no I/O). 0 disables. Default: `0`. */
  resyncPeriodMs?: number;
  /** Asked before each resync; `false` skips that one. Default: always resync. */
  shouldResync?: () => boolean;
}

/**
 * Options of {@linkcode Reflector.run}.
 *
 * @example
 * ```ts
 * import { Indexer, metaNamespaceKeyFunc, Reflector } from "../../mod.ts";
 * import type { ListerWatcher, RunOptions } from "../../mod.ts";
 * const lw: ListerWatcher = {
 *   list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
 *   async *watch() {},
 * };
 * const reflector = new Reflector(lw, new Indexer(metaNamespaceKeyFunc), { onError: () => {} });
 * const ac = new AbortController();
 * const options: RunOptions = { signal: ac.signal };
 * const done = reflector.run(options);
 * await reflector.synced;
 * ac.abort(); // run() resolves once the reflector has stopped
 * await done;
 * ```
 */
export interface RunOptions {
  /** Stops the reflector: `run()` then resolves. Required. */
  signal: AbortSignal;
}

/**
 * Keeps a {@linkcode Store} equal to the server's objects: a port of
 * client-go's `Reflector`. It joins a {@linkcode watcher} to a store: each
 * LIST replaces the store atomically, each change is applied in order,
 * bookmarks only advance `lastSyncResourceVersion`. Recoverable errors go to
 * `onError` and never end `run()`; invalid options throw at construction.
 *
 * @example
 * ```ts
 * import { Indexer, KubeClient, metaNamespaceKeyFunc, Reflector, resourceListerWatcher } from "../../mod.ts";
 * const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:8001" }), { apiVersion: "v1", resource: "configmaps" });
 * const store = new Indexer(metaNamespaceKeyFunc);
 * const reflector = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * console.log(store.listKeys(), reflector.lastSyncResourceVersion);
 * ac.abort();
 * await done;
 * ```
 */
export class Reflector<T extends KubeObject = KubeObject> {
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
  #running = false;
  readonly #waiters = new Set<{ settle: (err?: Error) => void }>();

  constructor(lw: ListerWatcher<T>, store: Store<T>, options: ReflectorOptions = {}) {
    if (!lw || typeof lw.list !== "function" || typeof lw.watch !== "function") {
      throw new TypeError("Reflector: the first argument must be a ListerWatcher (list and watch)");
    }
    if (!store || typeof store.replace !== "function") {
      throw new TypeError("Reflector: the second argument must be a Store");
    }
    const { name = "reflector", resyncPeriodMs = 0, shouldResync, ...rest } = options;
    if (!Number.isFinite(resyncPeriodMs) || resyncPeriodMs < 0) {
      throw new RangeError(`Reflector: resyncPeriodMs must be >= 0, got ${resyncPeriodMs}`);
    }
    if (shouldResync !== undefined && typeof shouldResync !== "function") {
      throw new TypeError("Reflector: shouldResync must be a function");
    }
    this.name = name;
    this.#lw = lw;
    this.#store = store;
    this.#options = resolveWatcherOptions(rest, name);
    this.#resyncPeriodMs = resyncPeriodMs;
    this.#shouldResync = shouldResync;
    this.synced = new Promise((resolve) => (this.#markSynced = resolve));
  }

  /** The resourceVersion the store reflects: of the last list, event or bookmark applied. */
  get lastSyncResourceVersion(): string {
    return this.#lastSyncResourceVersion;
  }

  /** True once the store has held a complete list. */
  hasSynced(): boolean {
    return this.#hasSynced;
  }

  /**
   * Waits for the first sync. Rejects with `signal.reason` if the signal
   * aborts first, and with an `Error` if a `run()` ends before the first
   * sync. A waiter that gives up leaves nothing behind.
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
   * for a recoverable error). Only one `run` at a time.
   */
  async run(options: RunOptions): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("Reflector.run: options.signal is required");
    }
    if (this.#running) throw new Error(`Reflector ${this.name}: already running`);
    if (signal.aborted) return;
    this.#running = true;
    const { controller, dispose } = childAbortController(signal);
    const resync = this.#resyncPeriodMs > 0
      ? this.#resyncLoop(controller.signal)
      : Promise.resolve();
    try {
      const from = {
        ...this.#options,
        signal,
        initialResourceVersion: this.#lastSyncResourceVersion,
      };
      for await (const ev of watcher(this.#lw, from)) {
        this.#apply(ev);
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      controller.abort();
      dispose();
      await resync;
      this.#running = false;
      if (!this.#hasSynced) {
        this.#settleWaiters(new Error(`Reflector ${this.name}: stopped before its first sync`));
      }
    }
  }

  #apply(ev: WatcherEvent<T>): void {
    try {
      switch (ev.type) {
        case "LIST":
          this.#store.replace(ev.items, ev.resourceVersion);
          break;
        case "ADDED":
        case "MODIFIED":
          // an ADDED for a known key (a replayed event) is an update: no duplicate
          this.#store.update(ev.object);
          break;
        case "DELETED":
          this.#store.delete(ev.object);
          break;
        case "BOOKMARK":
          break;
      }
    } catch (err) {
      this.#report(err, "store");
    }
    this.#lastSyncResourceVersion = ev.resourceVersion;
    if (ev.type === "LIST" && !this.#hasSynced) {
      this.#hasSynced = true;
      this.#markSynced();
      this.#settleWaiters();
    }
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
