/**
 * The handler interface of informers.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { DeletedFinalStateUnknown } from "../cache/deleted_final_state_unknown.ts";

/**
 * What a delete handler receives: the object's final state (from a DELETED
 * watch event), or a {@linkcode DeletedFinalStateUnknown} tombstone when the
 * deletion was only noticed by a relist (the watch was not looking), whose
 * `obj` is the last state this informer knew, possibly stale.
 *
 * @example
 * ```ts
 * import { DeletedFinalStateUnknown } from "../../mod.ts";
 * import type { DeletedObject, KubeObject } from "../../mod.ts";
 * function lastState(deleted: DeletedObject<KubeObject>): KubeObject {
 *   return deleted instanceof DeletedFinalStateUnknown ? deleted.obj : deleted;
 * }
 * console.log(lastState({ metadata: { name: "a" } }).metadata.name); // a
 * ```
 */
export type DeletedObject<T extends KubeObject> = T | DeletedFinalStateUnknown<T>;

/**
 * Callbacks an informer calls as its objects change (client-go's
 * `ResourceEventHandlerFuncs`). Every callback is optional and may be
 * `async`: a returned promise is awaited before the same handler gets its
 * next notification, so each handler sees the changes in order. A throw or
 * a rejection goes to the informer's `onError` (phase `"handler"`) and does
 * not affect other handlers or the informer.
 *
 * Objects are shared with the informer's cache: treat them as read-only.
 *
 * @example
 * ```ts
 * import type { KubeObject, ResourceEventHandler } from "../../mod.ts";
 * const handler: ResourceEventHandler<KubeObject> = {
 *   onAdd: (obj) => console.log("added", obj.metadata.name),
 *   onUpdate: (oldObj, newObj) => {
 *     if (oldObj === newObj) return; // a resync
 *     console.log("updated", newObj.metadata.name);
 *   },
 *   onDelete: async (obj) => {
 *     await Promise.resolve(); // async work is awaited before the next event
 *   },
 * };
 * ```
 */
export interface ResourceEventHandler<T extends KubeObject> {
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
 *
 * @example
 * ```ts
 * import { Informer } from "../../mod.ts";
 * import type { HandlerOptions, KubeObject, ListerWatcher } from "../../mod.ts";
 * const lw: ListerWatcher = {
 *   list: () => Promise.resolve({ metadata: { resourceVersion: "1" }, items: [] }),
 *   async *watch() {},
 * };
 * const informer = new Informer(lw, { name: "pods" });
 * const options: HandlerOptions = { maxQueueLength: 10_000 }; // a slow handler: keep more exactly
 * const handler = { onAdd: (pod: KubeObject) => console.log(pod.metadata.name) };
 * const registration = informer.addEventHandler(handler, options);
 * registration.remove();
 * ```
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
