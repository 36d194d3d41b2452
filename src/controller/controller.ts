/**
 * A controller: informers feed keys to a work queue, workers reconcile them.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";
import { deletionHandlingMetaNamespaceKeyFunc } from "../cache/key_func.ts";
import type { HandlerRegistration } from "../informer/handler_registration.ts";
import type { Informer } from "../informer/informer.ts";
import { waitForCacheSync } from "../informer/wait_for_cache_sync.ts";
import { WorkQueue, type WorkQueueOptions } from "../workqueue/work_queue.ts";
import type { ControllerSource } from "./controller_source.ts";

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
  #started = false;

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
    // One listener on the caller's signal, however many workers: each
    // worker's reconciles get a signal of its own, aborted from here.
    const workerAborts = Array.from({ length: this.#workers }, () => new AbortController());
    const stop = () => {
      for (const ac of workerAborts) ac.abort(signal.reason);
      this.queue.shutdown(); // ends the workers waiting for a key
    };
    let registrations: HandlerRegistration[] = [];
    signal.addEventListener("abort", stop, { once: true });
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
      await Promise.all(workerAborts.map((ac) => this.#work(ac.signal)));
    } finally {
      signal.removeEventListener("abort", stop);
      this.queue.shutdown();
      for (const r of registrations) r.remove();
    }
  }

  async #work(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const key = await this.queue.get();
      if (key === undefined) return; // shut down
      try {
        if (signal.aborted) return; // after shutdown, get() still hands out queued keys
        await this.#reconcile(key, { signal });
        this.queue.forget(key);
      } catch (err) {
        this.queue.addRateLimited(key); // ignored once the queue is shut down
        if (!(signal.aborted && isAbort(err, signal))) this.#report(err, key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  #handler(source: ControllerSource<KubeObjectLike>) {
    const enqueue = (obj: KubeObjectLike | DeletedFinalStateUnknown<KubeObjectLike>) => {
      try {
        if (!source.map) {
          return this.queue.add(
            this.#keyOf(obj as KubeObject | DeletedFinalStateUnknown<KubeObject>),
          );
        }
        const live = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        const keys = source.map(live);
        if (typeof keys === "string") this.queue.add(keys);
        else if (keys) { for (const key of keys) this.queue.add(key); }
      } catch (err) {
        this.#report(err, undefined);
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
