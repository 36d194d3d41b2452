/**
 * A controller's source: an informer, and which keys its changes enqueue.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { Informer } from "../informer/informer.ts";

/**
 * An informer whose changes a `Controller` turns into keys, and how. Build
 * one with {@linkcode controllerSource} so that `map`'s parameter is the
 * informer's object type. `map` is a method so that a source of Pods can be
 * listed beside a source of Deployments.
 */
export interface ControllerSource<T extends KubeObjectLike = KubeObject> {
  /** The informer (run by the caller, see `Controller`). */
  informer: Pick<Informer<T>, "name" | "addEventHandler">;
  /**
   * The keys to reconcile when `obj` is added, updated (called for the old
   * and the new state) or deleted (its final state, or a tombstone's last
   * known state); `undefined` or `[]` for none. For example the key of the
   * object's owner. Default: the controller's `keyOf(obj)`.
   */
  map?(obj: T): string | readonly string[] | undefined;
}

/**
 * A {@linkcode ControllerSource} whose `map` takes the informer's object
 * type, inferred and checked: `controllerSource(pods, (pod) => ...)` gives
 * `pod` the type of `pods`' objects, where a literal `{ informer, map }` in
 * `Controller`'s `informers` (which mixes sources of different types)
 * leaves an unannotated parameter untyped.
 *
 * @param informer The informer whose changes are mapped (run by the caller).
 * @param map The keys to reconcile for one of its objects (see {@linkcode ControllerSource.map}).
 * @throws {TypeError} when `informer` is not an informer or `map` is not a function.
 *
 * @example Pods enqueue the key of the Deployment-like owner named in a label
 * ```ts
 * import assert from "node:assert/strict";
 * import { controllerSource, Informer, KubeClient, type KubeObject, resourceListerWatcher } from "../../mod.ts";
 *
 * interface Pod extends KubeObject {
 *   spec?: { nodeName?: string };
 * }
 * const lw = resourceListerWatcher<Pod>(new KubeClient({ server: "http://127.0.0.1:8001" }), {
 *   apiVersion: "v1",
 *   resource: "pods",
 * });
 * const pods = new Informer(lw, { name: "pods" }); // not run here: only its type matters
 * const source = controllerSource(pods, (pod) => {
 *   const app = pod.metadata.labels?.app; // pod: Pod
 *   return app ? `${pod.metadata.namespace}/${app}` : undefined;
 * });
 * const pod: Pod = { metadata: { name: "web-0", namespace: "default", labels: { app: "web" } } };
 * assert.equal(source.map?.(pod), "default/web");
 * ```
 */
export function controllerSource<T extends KubeObjectLike>(
  informer: Pick<Informer<T>, "name" | "addEventHandler">,
  map?: (obj: T) => string | readonly string[] | undefined,
): ControllerSource<T> {
  if (typeof informer?.addEventHandler !== "function") {
    throw new TypeError("controllerSource: informer is not an informer");
  }
  if (map !== undefined && typeof map !== "function") {
    throw new TypeError("controllerSource: map must be a function");
  }
  return map === undefined ? { informer } : { informer, map };
}
