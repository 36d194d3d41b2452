/**
 * A controller: informers feed keys to a work queue, workers reconcile them.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";
import { deletionHandlingMetaNamespaceKeyFunc } from "../cache/key_func.ts";
import { type MetricsProvider, noopMetrics } from "../metrics/reflector_metrics.ts";
import type { ControllerMetrics } from "../metrics/controller_metrics.ts";
import type { HandlerRegistration } from "../informer/handler_registration.ts";
import type { Informer } from "../informer/informer.ts";
import { waitForCacheSync } from "../informer/wait_for_cache_sync.ts";
import { WorkQueue, type WorkQueueOptions } from "../workqueue/work_queue.ts";
import type { ControllerSource } from "./controller_source.ts";
import {
  type KeyOwnership,
  leaderOwnership,
  shardOwnership,
  singleOwnership,
} from "./_key_ownership.ts";
import type { ShardOptions } from "../shard/shard_options.ts";
import type { ControllerLeaderElection, ControllerOwnership } from "./controller_ownership.ts";

/**
 * Options of {@linkcode Controller}.
 */
export interface ControllerOptions {
  /** The controller's name: in messages, and the default name of its queue (metrics label). Required. */
  name: string;
  /**
   * The informers to watch: each an informer (every change enqueues the
   * object's `keyOf` key) or a {@linkcode ControllerSource} (its `map` says
   * which keys). At least one. Informers and sources of any object type mix
   * (`Informer<Deployment>` beside `Informer<Pod>`); build a source with
   * {@linkcode controllerSource}`(informer, map)` so that `map`'s parameter
   * is the informer's object type, checked (in a literal
   * `{ informer, map }` it is not inferred). Required.
   */
  informers: ReadonlyArray<
    // deno-lint-ignore no-explicit-any
    Pick<Informer<KubeObjectLike>, "name" | "addEventHandler"> | ControllerSource<any>
  >;
  /**
   * Reconciles one key: make the world match the informers' caches for it.
   * Called after every informer synced, for one key at a time per key
   * (a key changed meanwhile is reconciled again afterwards). Resolving
   * forgets the key's failures; throwing (or rejecting) requeues it with
   * backoff and reports the error to `onError`. `signal` aborts when the
   * controller stops. To look again later, call `controller.queue.addAfter(key, ms)`.
   * Required.
   */
  reconcile: (key: string, context: { signal: AbortSignal }) => void | Promise<void>;
  /**
   * The key of an object or of a `DeletedFinalStateUnknown` tombstone, for
   * sources without `map`. Default: `deletionHandlingMetaNamespaceKeyFunc`
   * (`"namespace/name"`, or `"name"`).
   */
  keyOf?(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): string;
  /** Reconciles running at once (each on a different key). Default: `2`. */
  workers?: number;
  /** Options of the work queue (backoff, overall rate limit, metrics, clock). Default: its defaults, named after the controller. */
  queue?: WorkQueueOptions;
  /**
   * Receives each error of `reconcile` with its key (the key is already
   * requeued), and errors of `keyOf` or `map` (key `undefined`; the change
   * is skipped). Must not throw. Default: a `console.warn` of the message.
   */
  onError?: (error: unknown, key: string | undefined) => void;
  /**
   * Run as one of several replicas, of which only the leader reconciles
   * (client-go's leader election on a `coordination.k8s.io/v1` Lease, see
   * {@linkcode LeaderElector}; its `onStartedLeading` is the controller's).
   * Every replica runs its informers and syncs (a warm standby); after its
   * informers synced it runs for leadership; while it leads its workers
   * reconcile, and when it becomes the leader it enqueues every key of its
   * informers' caches. When leadership is lost, the reconciles in progress
   * see their `signal` aborted and no other key is handed to a worker; on a
   * clean stop the Lease is released only after the reconciles in progress
   * have settled. Requires informers with `lister()`. Default: none (one
   * replica reconciles everything).
   */
  leaderElection?: ControllerLeaderElection;
  /**
   * Run as one of several replicas that split the keys: each replica holds
   * a membership Lease in the group `shards.name` (see
   * {@linkcode ShardMembership}) and reconciles only the keys that
   * rendezvous hashing gives it among the live members, so a member joining
   * or leaving moves only its share. Every replica runs its informers and
   * syncs (each watches every object); after its informers synced it
   * joins. A replica that joins owns nothing until every other member has
   * seen it (`graceMs`); one that cannot renew or list within
   * `renewDeadlineMs` owns nothing, before the others take its keys (after
   * its Lease expired by their clocks, or at once when it deleted it on a
   * clean stop). On every change the reconciles of keys it lost are
   * aborted, and the keys of its caches it gained are enqueued. Excludes
   * `leaderElection`. Requires informers with `lister()`. Default: none.
   */
  shards?: ShardOptions;
  /**
   * Where the controller's ownership metrics go (see
   * `MetricsProvider.controller`: owning, leader, shard members, keys owned,
   * transitions), asked for when `run()` starts and disposed of when it
   * ends. Default: `queue.metrics` (so one provider serves the queue and the
   * controller), else none.
   */
  metrics?: MetricsProvider;
}

/**
 * Informers → work queue → `reconcile(key, { signal })` with N workers
 * (client-go's controller pattern, controller-runtime's `Reconciler`).
 *
 * `run({ signal })` registers a handler on each informer, waits until every
 * informer has synced and every object of its initial list has been
 * enqueued, then runs `workers` workers; each takes a key, reconciles it,
 * and on success forgets its failures, on a throw requeues it with backoff
 * (`queue.addRateLimited`). A key is never reconciled by two workers at once.
 *
 * The controller does not run its informers: run them (or their
 * `SharedInformerFactory`) yourself, with the same signal or a longer-lived
 * one, so that several controllers can share them. Until they sync,
 * `run()` waits.
 *
 * Stopping: when `signal` aborts, the reconciles in progress see their
 * `signal` aborted, no new one starts, the queue shuts down and the
 * handlers are removed; `run()` resolves once the reconciles in progress
 * have settled. It never rejects for a reconcile's error. It rejects only
 * when an informer stops before it synced (the message names it).
 *
 * @example Reconcile every ConfigMap
 * ```ts
 * import assert from "node:assert/strict";
 * import { Controller, Informer, KubeClient, resourceListerWatcher } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * for (const name of ["a", "b"]) {
 *   server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default" } });
 * }
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const configMaps = new Informer(lw, { name: "configmaps" });
 * const ac = new AbortController();
 * const reconciled: string[] = [];
 * const controller = new Controller({
 *   name: "demo",
 *   informers: [configMaps],
 *   reconcile: (key) => {
 *     reconciled.push(key);
 *     if (reconciled.length === 2) ac.abort(); // done for this example
 *   },
 * });
 * const informing = configMaps.run({ signal: ac.signal });
 * await controller.run({ signal: ac.signal });
 * await informing;
 * assert.deepEqual(reconciled.sort(), ["default/a", "default/b"]);
 * await server.close();
 * ```
 */
export class Controller {
  /** The controller's name. */
  readonly name: string;
  /** The work queue: add keys to it yourself to reconcile them (now, or later with `addAfter`). */
  readonly queue: WorkQueue<string>;
  readonly #sources: ControllerSource<KubeObjectLike>[];
  readonly #reconcile: ControllerOptions["reconcile"];
  readonly #keyOf: NonNullable<ControllerOptions["keyOf"]>;
  readonly #workers: number;
  readonly #onError: NonNullable<ControllerOptions["onError"]>;
  readonly #ownership: KeyOwnership;
  readonly #metrics: MetricsProvider;
  /** The reconciles in progress, by key (a key is reconciled by one worker at a time). */
  readonly #inFlight = new Map<string, AbortController>();
  #started = false;
  #stopping = false;

  /**
   * Creates a controller; nothing happens until `run()`.
   *
   * @throws {TypeError} when `name`, `informers` or `reconcile` is missing or of the wrong type.
   * @throws {RangeError} when `workers` is not an integer >= 1, or a queue option is out of range.
   */
  constructor(options: ControllerOptions) {
    const {
      name,
      informers,
      reconcile,
      keyOf = deletionHandlingMetaNamespaceKeyFunc,
      workers = 2,
      queue = {},
      onError,
      leaderElection,
      shards,
      metrics = queue?.metrics ?? noopMetrics,
    } = options ?? {};
    if (typeof name !== "string" || name === "") {
      throw new TypeError("Controller: name must be a non-empty string");
    }
    if (!Array.isArray(informers) || informers.length === 0) {
      throw new TypeError(`Controller ${name}: informers must be a non-empty array`);
    }
    this.#sources = informers.map((s, i) => {
      const source: ControllerSource<KubeObjectLike> =
        typeof s === "object" && s !== null && "informer" in s ? s : { informer: s };
      if (typeof source.informer?.addEventHandler !== "function") {
        throw new TypeError(`Controller ${name}: informers[${i}] is not an informer`);
      }
      if (source.map !== undefined && typeof source.map !== "function") {
        throw new TypeError(`Controller ${name}: informers[${i}].map must be a function`);
      }
      return source;
    });
    if (typeof reconcile !== "function") {
      throw new TypeError(`Controller ${name}: reconcile must be a function`);
    }
    if (typeof keyOf !== "function") {
      throw new TypeError(`Controller ${name}: keyOf must be a function`);
    }
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(`Controller ${name}: workers must be an integer >= 1, got ${workers}`);
    }
    if (onError !== undefined && typeof onError !== "function") {
      throw new TypeError(`Controller ${name}: onError must be a function`);
    }
    if (leaderElection !== undefined && shards !== undefined) {
      throw new TypeError(`Controller ${name}: leaderElection and shards exclude each other`);
    }
    for (const [option, value] of [["leaderElection", leaderElection], ["shards", shards]]) {
      if (value === undefined) continue;
      if (value === null || typeof value !== "object") {
        throw new TypeError(`Controller ${name}: ${option} must be an object`);
      }
      this.#sources.forEach((s, i) => {
        if (typeof (s.informer as Partial<Informer<KubeObjectLike>>).lister !== "function") {
          throw new TypeError(
            `Controller ${name}: informers[${i}] has no lister(), which ${option} needs (to enqueue the keys it gains)`,
          );
        }
      });
    }
    const reportTo = (err: unknown) => this.#report(err, undefined);
    this.#ownership = leaderElection !== undefined
      ? leaderOwnership({ onError: reportTo, ...leaderElection })
      : shards !== undefined
      ? shardOwnership({ onError: reportTo, ...shards })
      : singleOwnership();
    if (
      metrics === null || typeof metrics !== "object" ||
      (metrics.controller !== undefined && typeof metrics.controller !== "function")
    ) {
      throw new TypeError(`Controller ${name}: metrics must be a MetricsProvider`);
    }
    this.#metrics = metrics;
    this.name = name;
    this.#reconcile = reconcile;
    this.#keyOf = keyOf;
    this.#workers = workers;
    this.#onError = onError ?? ((err, key) =>
      console.warn(
        `[${name}] ${key === undefined ? "enqueue" : `reconcile ${key}`} failed: ${
          err instanceof Error ? err.message : String(err)
        }`,
      ));
    this.queue = new WorkQueue<string>({ name, ...queue });
  }

  /**
   * Runs the controller until `signal` aborts (see the class doc). A
   * controller runs once: a second call throws.
   *
   * @throws {Error} (rejects) when an informer stops before it synced.
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("Controller.run: options.signal is required");
    }
    if (this.#started) throw new Error(`Controller ${this.name}: run() was already called`);
    this.#started = true;
    // The election or membership stops only after the reconciles in progress settled: a
    // released Lease lets another replica take over at once.
    const ownershipStop = new AbortController();
    let ownershipRun: Promise<void> | undefined;
    let ownershipFailure: { error: unknown } | undefined;
    const stop = () => {
      this.#stopping = true;
      for (const ac of this.#inFlight.values()) ac.abort(signal.reason);
      this.queue.shutdown(); // ends the workers waiting for a key
    };
    let registrations: HandlerRegistration[] = [];
    let unsubscribe = () => {};
    signal.addEventListener("abort", stop, { once: true });
    let metrics: ControllerMetrics | undefined;
    try {
      metrics = this.#metrics.controller?.(this.name, {
        ownership: () => this.ownership,
        keysOwned: () => this.#keysOwned(),
      });
    } catch (err) {
      this.#report(err, undefined); // metrics never stop a controller
    }
    try {
      if (signal.aborted) return stop();
      registrations = this.#sources.map((s) => s.informer.addEventHandler(this.#handler(s)));
      await waitForCacheSync(signal, ...registrations);
      if (signal.aborted) return;
      const unsynced = this.#sources.filter((_, i) => !registrations[i].hasSynced());
      if (unsynced.length > 0) {
        const names = unsynced.map((s) => s.informer.name).join(", ");
        throw new Error(`Controller ${this.name}: informer(s) ${names} stopped before syncing`);
      }
      unsubscribe = this.#ownership.onChange((ownedBefore) => this.#ownershipChanged(ownedBefore));
      ownershipRun = this.#ownership.run(ownershipStop.signal).catch((error) => {
        ownershipFailure = { error };
        stop();
      });
      await Promise.all(Array.from({ length: this.#workers }, () => this.#work()));
      if (ownershipFailure) throw ownershipFailure.error;
    } finally {
      signal.removeEventListener("abort", stop);
      this.#stopping = true;
      this.queue.shutdown();
      ownershipStop.abort();
      await ownershipRun;
      unsubscribe();
      for (const r of registrations) r.remove();
      metrics?.dispose();
    }
  }

  /** The distinct keys of the informers' caches this replica owns (at scrape time: O(objects)). */
  #keysOwned(): number {
    const keys = new Set<string>();
    for (const source of this.#sources) {
      const lister = (source.informer as Partial<Pick<Informer<KubeObjectLike>, "lister">>).lister;
      if (typeof lister !== "function") return NaN; // unknown: not reported
      for (const obj of lister.call(source.informer).list()) {
        for (const key of this.#keysOf(source, obj, false)) {
          if (this.#ownership.owns(key)) keys.add(key);
        }
      }
    }
    return keys.size;
  }

  /**
   * What this replica owns now: every key (`"single"`), every key while it
   * leads (`leaderElection`), or its share (`shards`).
   */
  get ownership(): ControllerOwnership {
    return this.#ownership.status();
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return; // shut down
      if (this.#stopping || !this.#ownership.owns(key)) {
        // after shutdown, get() still hands out queued keys; a key owned elsewhere is that
        // replica's (and enqueued here again should it become ours)
        this.queue.forget(key);
        this.queue.done(key);
        if (this.#stopping) return;
        continue;
      }
      const ac = new AbortController();
      this.#inFlight.set(key, ac);
      try {
        await this.#reconcile(key, { signal: ac.signal });
        this.queue.forget(key);
      } catch (err) {
        this.queue.addRateLimited(key); // ignored once the queue is shut down
        if (!(ac.signal.aborted && isAbort(err, ac.signal))) this.#report(err, key);
      } finally {
        this.#inFlight.delete(key);
        this.queue.done(key);
      }
    }
  }

  /** Aborts the reconciles of keys no longer owned, and enqueues the keys gained. */
  #ownershipChanged(ownedBefore: (key: string) => boolean): void {
    for (const [key, ac] of this.#inFlight) {
      if (!this.#ownership.owns(key)) {
        ac.abort(new DOMException(`the key ${key} is no longer this replica's`, "AbortError"));
      }
    }
    if (this.#stopping) return;
    for (const source of this.#sources) {
      const lister = (source.informer as Partial<Pick<Informer<KubeObjectLike>, "lister">>).lister;
      if (typeof lister !== "function") continue; // checked in the constructor
      for (const obj of lister.call(source.informer).list()) {
        for (const key of this.#keysOf(source, obj)) {
          if (this.#ownership.owns(key) && !ownedBefore(key)) this.queue.add(key);
        }
      }
    }
  }

  /** The keys a change of `obj` enqueues (errors of `keyOf` or `map` are reported: none). */
  #keysOf(
    source: ControllerSource<KubeObjectLike>,
    obj: KubeObjectLike | DeletedFinalStateUnknown<KubeObjectLike>,
    report = true,
  ): readonly string[] {
    try {
      if (!source.map) {
        return [this.#keyOf(obj as KubeObject | DeletedFinalStateUnknown<KubeObject>)];
      }
      const live = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
      const keys = source.map(live);
      return typeof keys === "string" ? [keys] : keys ?? [];
    } catch (err) {
      if (report) this.#report(err, undefined);
      return [];
    }
  }

  #handler(source: ControllerSource<KubeObjectLike>) {
    const enqueue = (obj: KubeObjectLike | DeletedFinalStateUnknown<KubeObjectLike>) => {
      for (const key of this.#keysOf(source, obj)) {
        // A key owned elsewhere is not queued here: it is enqueued when it becomes ours.
        if (this.#ownership.owns(key)) this.queue.add(key);
      }
    };
    return {
      onAdd: (obj: KubeObjectLike) => enqueue(obj),
      onUpdate: (oldObj: KubeObjectLike, newObj: KubeObjectLike) => {
        if (source.map && oldObj !== newObj) enqueue(oldObj);
        enqueue(newObj);
      },
      onDelete: (obj: KubeObjectLike | DeletedFinalStateUnknown<KubeObjectLike>) => enqueue(obj),
    };
  }

  #report(err: unknown, key: string | undefined): void {
    try {
      this.#onError(err, key);
    } catch { /* onError must not throw; a throw is ignored */ }
  }
}

function isAbort(err: unknown, signal: AbortSignal): boolean {
  return err === signal.reason || (err instanceof Error && err.name === "AbortError");
}
