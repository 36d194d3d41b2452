/**
 * Internals of `Informer.changes()`: a handler that hands each change to an
 * async iterator and waits until the consumer has taken it.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";
import type { HandlerRegistration } from "./handler_registration.ts";
import type { InformerChange } from "./informer_change.ts";
import type { ResourceEventHandler } from "./resource_event_handler.ts";

/** Registers `handler`; `onClose` is called if the informer stops. */
export type Subscribe<T extends KubeObjectLike> = (
  handler: ResourceEventHandler<T>,
  onClose: () => void,
) => HandlerRegistration;

type Waiter<T extends KubeObjectLike> = {
  resolve: (r: IteratorResult<InformerChange<T>>) => void;
  reject: (e: unknown) => void;
};

/**
 * The async iterator of an informer's changes. Backpressure: the handler
 * behind it is awaited until the consumer takes each change, so a slow
 * consumer makes the registration's queue grow (and coalesce when full),
 * never an unbounded buffer here.
 */
export function changeIterator<T extends KubeObjectLike>(
  subscribe: Subscribe<T>,
  keyOf: (obj: T) => string,
  signal: AbortSignal | undefined,
): AsyncIterableIterator<InformerChange<T>> {
  let slot: { change: InformerChange<T>; taken: () => void } | undefined;
  let waiter: Waiter<T> | undefined;
  let done = false;
  let syncedSent = false;

  const syncedDue = () => !syncedSent && reg.hasSynced();
  const take = (): IteratorResult<InformerChange<T>> | undefined => {
    if (syncedDue()) {
      syncedSent = true;
      return { value: { type: "synced" }, done: false };
    }
    if (!slot) return undefined;
    const { change, taken } = slot;
    slot = undefined;
    taken();
    return { value: change, done: false };
  };
  const wake = () => {
    if (!waiter) return;
    const result = take();
    if (!result) return;
    const w = waiter;
    waiter = undefined;
    w.resolve(result);
  };
  const deliver = (change: InformerChange<T>): Promise<void> => {
    if (done) return Promise.resolve();
    return new Promise<void>((taken) => {
      slot = { change, taken };
      wake();
    });
  };
  const finish = (error?: { reason: unknown }) => {
    if (done) return;
    done = true;
    signal?.removeEventListener("abort", onAbort);
    reg.remove();
    slot?.taken();
    slot = undefined;
    const w = waiter;
    waiter = undefined;
    if (error) w?.reject(error.reason);
    else w?.resolve({ value: undefined, done: true });
  };
  // the one abort rule: an iterator ends quietly when its own signal aborts
  const onAbort = () => finish();

  const reg = subscribe({
    onAdd: (object, isInInitialList) =>
      deliver({ type: "add", key: keyOf(object), object, isInInitialList }),
    onUpdate: (oldObject, object) =>
      deliver({ type: "update", key: keyOf(object), oldObject, object }),
    onDelete: (object) =>
      deliver({
        type: "delete",
        key: object instanceof DeletedFinalStateUnknown ? object.key : keyOf(object),
        object,
      }),
  }, () => finish());
  reg.waitForSync().then(wake, () => {});
  if (signal?.aborted || reg.removed) finish();
  else signal?.addEventListener("abort", onAbort, { once: true });

  return {
    next(): Promise<IteratorResult<InformerChange<T>>> {
      if (signal?.aborted && !done) onAbort();
      if (done) return Promise.resolve({ value: undefined, done: true });
      const result = take();
      if (result) return Promise.resolve(result);
      if (waiter) {
        return Promise.reject(
          new TypeError("changes(): next() called while a previous next() is pending"),
        );
      }
      return new Promise((resolve, reject) => (waiter = { resolve, reject }));
    },
    return(): Promise<IteratorResult<InformerChange<T>>> {
      finish();
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
