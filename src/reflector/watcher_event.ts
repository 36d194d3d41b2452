import type { KubeObject, KubeObjectLike } from "../api/types.ts";

/**
 * What the watcher yields. `LIST` is a complete, consistent snapshot that
 * replaces everything known before (the first list, every relist, the end of
 * a streaming list); the others are changes after it, in order. Every event
 * carries the resourceVersion to resume from once it has been applied.
 */
export type WatcherEvent<T extends KubeObjectLike = KubeObject> =
  | { type: "LIST"; items: T[]; resourceVersion: string }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T; resourceVersion: string }
  | { type: "BOOKMARK"; resourceVersion: string };
