/**
 * Internals of handler registrations: the notification type and the
 * per-handler queue, ordered while short, coalescing per object when full.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import type { DeletedObject } from "./resource_event_handler.ts";

/** One change to deliver to a handler. `seq` orders notifications informer-wide. */
export type Notification<T extends KubeObjectLike> =
  & { key: string; seq: number }
  & (
    | { type: "add"; object: T; initial: boolean }
    | { type: "update"; oldObject: T; object: T }
    | { type: "delete"; object: DeletedObject<T> }
  );

/** A coalesced entry: at most a delete (of what the handler saw) then an add or update. */
interface Slot<T extends KubeObjectLike> {
  seq: number;
  del?: Notification<T>;
  live?: Notification<T>;
}

/**
 * A FIFO of notifications. While it holds at most `limit` entries (not
 * counting the adds of an initial list: one per distinct object, bounded by
 * the list) it keeps every notification in order. Past `limit` it coalesces: pending
 * notifications of the same object merge into at most a delete followed by
 * an add or update carrying the newest state, so its size is bounded by the
 * number of distinct objects, no deletion is lost, and only intermediate
 * states are skipped. It returns to plain order once drained.
 */
export class HandlerQueue<T extends KubeObjectLike> {
  readonly limit: number;
  #fifo: Notification<T>[] = [];
  #head = 0;
  #slots: Map<string, Slot<T>> | undefined;
  #size = 0;
  /** Initial-list adds in `#fifo` (they do not count toward `limit`). */
  #initial = 0;
  /** Walks the slots in order while coalescing; `#next` is the slot it stands on. */
  #cursor: MapIterator<[string, Slot<T>]> | undefined;
  #next: [string, Slot<T>] | undefined;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Notifications waiting. */
  get length(): number {
    return this.#size;
  }

  /** True while the queue is coalescing. */
  get coalescing(): boolean {
    return this.#slots !== undefined;
  }

  /** The `seq` of the next notification out, or `Infinity` when empty. */
  get headSeq(): number {
    if (this.#slots) return this.#peek()?.[1].seq ?? Infinity;
    return this.#head < this.#fifo.length ? this.#fifo[this.#head].seq : Infinity;
  }

  /** Appends `n`; returns true when this push made the queue start coalescing. */
  push(n: Notification<T>): boolean {
    if (this.#slots) {
      this.#merge(n);
      if (this.#size === 0) this.#endCoalescing();
      return false;
    }
    this.#fifo.push(n);
    this.#size++;
    if (n.type === "add" && n.initial) this.#initial++;
    if (this.#size - this.#initial <= this.limit) return false;
    const pending = this.#fifo.slice(this.#head);
    this.#fifo = [];
    this.#head = 0;
    this.#slots = new Map();
    this.#size = 0;
    this.#initial = 0;
    for (const p of pending) this.#merge(p);
    if (this.#size === 0) this.#endCoalescing();
    return true;
  }

  /** Removes and returns the next notification. */
  shift(): Notification<T> | undefined {
    if (this.#slots) {
      const head = this.#peek();
      if (!head) return undefined;
      const [key, slot] = head;
      const n = slot.del ?? slot.live!;
      if (slot.del) slot.del = undefined;
      else slot.live = undefined;
      if (!slot.del && !slot.live) this.#slots.delete(key);
      this.#size--;
      if (this.#size === 0) this.#endCoalescing();
      return n;
    }
    if (this.#head >= this.#fifo.length) return undefined;
    const n = this.#fifo[this.#head];
    this.#fifo[this.#head++] = undefined as never;
    this.#size--;
    if (n.type === "add" && n.initial) this.#initial--;
    if (this.#head >= this.#fifo.length) {
      this.#fifo = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#fifo.length) {
      this.#fifo = this.#fifo.slice(this.#head);
      this.#head = 0;
    }
    return n;
  }

  /** Drops everything. */
  clear(): void {
    this.#fifo = [];
    this.#head = 0;
    this.#endCoalescing();
    this.#size = 0;
    this.#initial = 0;
  }

  #endCoalescing(): void {
    this.#slots = undefined;
    this.#cursor = undefined;
    this.#next = undefined;
  }

  /**
   * The oldest slot, found by one iterator kept across calls. Looking for
   * the first entry afresh each time would be quadratic: a Map keeps the
   * entries deleted from its front until it rehashes, and iteration steps
   * over each of them.
   */
  #peek(): [string, Slot<T>] | undefined {
    const slots = this.#slots!;
    while (true) {
      // still queued (not emptied, nor replaced by a later slot of that key)?
      if (this.#next && slots.get(this.#next[0]) === this.#next[1]) return this.#next;
      this.#cursor ??= slots.entries();
      const r = this.#cursor.next();
      if (r.done) {
        this.#cursor = undefined;
        this.#next = undefined;
        return undefined;
      }
      this.#next = r.value;
    }
  }

  #merge(n: Notification<T>): void {
    const slots = this.#slots!;
    let slot = slots.get(n.key);
    if (!slot) slots.set(n.key, slot = { seq: n.seq });
    const before = (slot.del ? 1 : 0) + (slot.live ? 1 : 0);
    const live = slot.live;
    if (n.type === "delete") {
      if (live?.type === "add") {
        slot.live = undefined; // the handler never saw it: nothing to delete
      } else {
        slot.live = undefined;
        slot.del ??= n; // keep the delete of what the handler saw
      }
    } else if (!live) {
      slot.live = n;
    } else if (live.type === "add") {
      slot.live = { ...live, object: n.object };
    } else if (live.type === "update") {
      slot.live = { ...live, object: n.object };
    }
    const after = (slot.del ? 1 : 0) + (slot.live ? 1 : 0);
    if (after === 0) slots.delete(n.key);
    this.#size += after - before;
  }
}
