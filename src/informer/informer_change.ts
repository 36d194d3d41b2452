/**
 * The changes an informer produces.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { DeletedObject } from "./resource_event_handler.ts";

/**
 * One change of an informer's cache, as yielded by `Informer.changes()` and
 * passed to `InformerStore`'s `onChange`. `key` is the object's store key
 * (`"namespace/name"` or `"name"`). `synced` comes once, after the adds of
 * the initial list. A resync is an `update` whose `oldObject === object`.
 *
 * @example
 * ```ts
 * import type { InformerChange, KubeObject } from "../../mod.ts";
 * function describe(change: InformerChange<KubeObject>): string {
 *   switch (change.type) {
 *     case "add":
 *       return `+ ${change.key}`;
 *     case "update":
 *       return change.oldObject === change.object ? `= ${change.key}` : `~ ${change.key}`;
 *     case "delete":
 *       return `- ${change.key}`;
 *     case "synced":
 *       return "synced";
 *   }
 * }
 * console.log(describe({ type: "add", key: "default/a", object: { metadata: { name: "a" } }, isInInitialList: true })); // + default/a
 * ```
 */
export type InformerChange<T extends KubeObject> =
  | { type: "add"; key: string; object: T; isInInitialList: boolean }
  | { type: "update"; key: string; oldObject: T; object: T }
  | { type: "delete"; key: string; object: DeletedObject<T> }
  | { type: "synced" };
