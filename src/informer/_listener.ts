/**
 * Internals of informers: one handler's queue and its delivery loop.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { HandlerQueue, type Notification } from "./_handler_queue.ts";
import type { HandlerRegistration } from "./handler_registration.ts";
import type { ResourceEventHandler } from "./resource_event_handler.ts";

/** What a listener needs from its informer; none of these may throw. */
export interface ListenerContext {
  /** A handler threw or rejected. */
  report(error: unknown): void;
  /** A handler call finished. */
  /** Whether handler durations are wanted (metrics are on). */
  timed(): boolean;
  handlerDone(durationMs: number, failed: boolean): void;
  /** The queue reached its limit and started coalescing. */
  overflow(): void;
  /** The registration was removed by its owner. */
  detach(listener: Listener<KubeObject>): void;
}

/**
 * Delivers notifications to one handler, in order, one at a time: an async
 * handler is awaited before its next notification. Handlers are never called
 * from inside a store operation (delivery starts on a later microtask).
 */
export class Listener<T extends KubeObjectLike> implements HandlerRegistration {
  readonly #handler: ResourceEventHandler<T>;
  readonly #queue: HandlerQueue<T>;
  readonly #ctx: ListenerContext;
  #draining: Promise<void> | undefined;
  #inFlight: number | undefined;
  #barrier: number | undefined;
  #synced = false;
  #removed = false;
  #waiters = new Set<{ resolve: () => void; reject: (e: unknown) => void }>();

  constructor(handler: ResourceEventHandler<T>, maxQueueLength: number, ctx: ListenerContext) {
    this.#handler = handler;
    this.#queue = new HandlerQueue(maxQueueLength);
    this.#ctx = ctx;
  }

  get pending(): number {
    return this.#queue.length;
  }

  get removed(): boolean {
    return this.#removed;
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForSync(options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options;
    if (this.#synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#removed) return Promise.reject(notSynced());
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiters.delete(waiter);
        reject(signal!.reason);
      };
      const waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (e: unknown) => {
          signal?.removeEventListener("abort", onAbort);
          reject(e);
        },
      };
      this.#waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  remove(): void {
    if (this.#removed) return;
    this.stop();
    this.#ctx.detach(this as unknown as Listener<KubeObject>);
  }

  /** Queues `n` and makes sure the delivery loop runs. */
  enqueue(n: Notification<T>): void {
    if (this.#removed) return;
    // (an initial list's adds never start coalescing: see HandlerQueue)
    if (this.#queue.push(n)) this.#ctx.overflow();
    if (!this.#draining) this.#draining = this.#drain();
  }

  /** Every notification up to `seq` belongs to this handler's initial list. */
  markInitial(seq: number): void {
    if (this.#barrier !== undefined || this.#removed) return;
    this.#barrier = seq;
    this.#checkSynced();
  }

  /** Stops deliveries; resolves once a call in progress has settled. */
  stop(): Promise<void> {
    this.#removed = true;
    this.#queue.clear();
    for (const w of this.#waiters) w.reject(notSynced());
    this.#waiters.clear();
    return this.#draining ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    await null; // never run a handler inside the store operation that queued it
    try {
      while (!this.#removed) {
        const n = this.#queue.shift();
        if (!n) break;
        this.#inFlight = n.seq;
        // timed only for metrics: performance.now() twice per change adds up
        const timed = this.#ctx.timed();
        const started = timed ? performance.now() : 0;
        let failed = false;
        try {
          const result = this.#call(n);
          if (result && typeof (result as Promise<void>).then === "function") await result;
        } catch (err) {
          failed = true;
          this.#ctx.report(err);
        }
        this.#inFlight = undefined;
        if (timed) this.#ctx.handlerDone(performance.now() - started, failed);
        this.#checkSynced();
      }
    } finally {
      this.#draining = undefined;
    }
  }

  #call(n: Notification<T>): void | Promise<void> {
    const h = this.#handler;
    switch (n.type) {
      case "add":
        return h.onAdd?.(n.object, n.initial);
      case "update":
        return h.onUpdate?.(n.oldObject, n.object);
      case "delete":
        return h.onDelete?.(n.object);
    }
  }

  #checkSynced(): void {
    if (this.#synced || this.#barrier === undefined) return;
    if (this.#inFlight !== undefined && this.#inFlight <= this.#barrier) return;
    if (this.#queue.headSeq <= this.#barrier) return;
    this.#synced = true;
    for (const w of this.#waiters) w.resolve();
    this.#waiters.clear();
  }
}

function notSynced(): Error {
  return new Error(
    "the handler registration was removed (or its informer stopped) before it synced",
  );
}
