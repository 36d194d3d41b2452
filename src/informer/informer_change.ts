/**
 * The changes an informer produces.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { DeletedObject } from "./resource_event_handler.ts";

/**
 * One change of an informer's cache, as yielded by `Informer.changes()` and
 * passed to `InformerStore`'s `onChange`. `key` is the object's store key
 * (`"namespace/name"` or `"name"`). `synced` comes once, after the adds of
 * the initial list. A resync is an `update` whose `oldObject === object`.
 */
export type InformerChange<T extends KubeObjectLike = KubeObject> =
  | { type: "add"; key: string; object: T; isInInitialList: boolean }
  | { type: "update"; key: string; oldObject: T; object: T }
  | { type: "delete"; key: string; object: DeletedObject<T> }
  | { type: "synced" };
