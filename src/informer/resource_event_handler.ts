/**
 * The handler interface of informers.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";

/**
 * What a delete handler receives: the object's final state (from a DELETED
 * watch event), or a {@linkcode DeletedFinalStateUnknown} tombstone (a
 * deletion only a relist noticed).
 */
export type DeletedObject<T extends KubeObjectLike = KubeObject> = T | DeletedFinalStateUnknown<T>;

/**
 * Callbacks an informer calls as its objects change (client-go's
 * `ResourceEventHandlerFuncs`). Every callback is optional and may be
 * `async`: a returned promise is awaited before the same handler gets its
 * next notification, so each handler sees the changes in order. A throw or
 * a rejection goes to the informer's `onError` (phase `"handler"`) and does
 * not affect other handlers or the informer.
 *
 * Objects are the informer cache's own (see `Store`): treat them as read-only.
 */
export interface ResourceEventHandler<T extends KubeObjectLike = KubeObject> {
  /**
   * An object appeared. `isInInitialList` is true for the objects of the
   * first list, and for the current objects replayed to a handler added
   * later.
   */
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  /** An object changed; on a resync it is called with `oldObj === newObj` for every object. */
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /** An object went away: its final state, or a tombstone (see {@linkcode DeletedObject}). */
  onDelete?(obj: DeletedObject<T>): void | Promise<void>;
}

/**
 * Options of `Informer.addEventHandler`.
 */
export interface HandlerOptions {
  /**
   * How many notifications may wait for this handler, in order, before its
   * queue switches to coalescing. Default: the informer's
   * `maxQueueLength` (itself `1000` by default). See `Informer` for the
   * policy.
   */
  maxQueueLength?: number;
}
