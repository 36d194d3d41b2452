import type { KubeObjectLike } from "../api/types.ts";
import { heldCopy } from "../cache/_held_copy.ts";
import { metaNamespaceKeyFunc } from "../cache/key_func.ts";
import type { CatchUpChange, CatchUpListReason } from "./catch_up_options.ts";
import type { WatcherEvent } from "./watcher_event.ts";

/** A resourceVersion as an integer, or undefined when it is not one. */
export function versionOf(rv: string | undefined): bigint | undefined {
  return rv && /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

/**
 * What `catchUp` has applied: the objects by key, the changes in order,
 * the version they are exact at, and why they were listed. Applies the
 * watcher's events; knows nothing of requests.
 */
export class CatchUpState<T extends KubeObjectLike> {
  readonly objects = new Map<string, T>();
  readonly changes: CatchUpChange<T>[] = [];
  /** The version `objects` are exact at (`""`: nothing yet). */
  rv: string;
  /** Why the objects were listed, once they were (the first reason sticks). */
  listed: CatchUpListReason | undefined;
  /** The reason the next list will have, set when the watcher announces a relist. */
  nextListReason: CatchUpListReason | undefined;
  /** The version the changes are since: the checkpoint's (`""`: none to go on from, a new snapshot). */
  since = "";
  /** Whether the stored checkpoint must be replaced even if it claims a newer version (ahead of the server). */
  replace = false;

  constructor(items: Iterable<T>, rv: string) {
    for (const o of items) this.objects.set(metaNamespaceKeyFunc(o), o);
    this.rv = rv;
  }

  /** The held copy of an unchanged listed item (same key, uid, version and content), for list reuse. */
  readonly reuse = (item: KubeObjectLike): T | undefined =>
    heldCopy(this.objects, metaNamespaceKeyFunc, item as T);

  /** The net changes: each changed key once, with its object now (`undefined`: deleted). */
  netChanges(): [string, T | undefined][] {
    const net = new Map<string, T | undefined>();
    for (const c of this.changes) net.set(c.key, c.type === "delete" ? undefined : c.object);
    return [...net];
  }

  /** Whether everything up to `goal` is applied. */
  reached(goal: bigint): boolean {
    return (versionOf(this.rv) ?? -1n) >= goal;
  }

  /**
   * Applies one event of the watcher. An object that has no key (no
   * `metadata.name`) cannot be kept: it is reported (phase `store`) and
   * left out, as a store leaves it out.
   */
  apply(ev: WatcherEvent<T>, report: (err: unknown, phase: "store") => void): void {
    switch (ev.type) {
      case "LIST":
        this.listed ??= this.nextListReason;
        this.#diff(ev.items, report);
        break;
      case "BOOKMARK":
        break;
      default: {
        const key = keyOf(ev.object, report);
        if (key !== undefined) this.#change(ev.type, key, ev.object);
      }
    }
    this.rv = ev.resourceVersion;
  }

  #change(type: "ADDED" | "MODIFIED" | "DELETED", key: string, object: T): void {
    const old = this.objects.get(key);
    if (type === "DELETED") {
      if (!old) return;
      this.objects.delete(key);
      this.changes.push({ type: "delete", key, object });
    } else {
      this.objects.set(key, object);
      this.changes.push(
        old ? { type: "update", key, oldObject: old, object } : { type: "add", key, object },
      );
    }
  }

  /** Makes the objects the list's items, recording what differs: adds, updates (a new resourceVersion), deletes. */
  #diff(items: T[], report: (err: unknown, phase: "store") => void): void {
    const gone = new Map(this.objects);
    for (const object of items) {
      const key = keyOf(object, report);
      if (key === undefined) continue;
      const old = this.objects.get(key);
      gone.delete(key);
      this.objects.set(key, object);
      if (!old) this.changes.push({ type: "add", key, object });
      else if (old.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
        this.changes.push({ type: "update", key, oldObject: old, object });
      }
    }
    for (const [key, object] of gone) {
      this.objects.delete(key);
      this.changes.push({ type: "delete", key, object });
    }
  }
}

/** The object's key, or undefined (reported) when it has none. */
function keyOf<T extends KubeObjectLike>(
  object: T,
  report: (err: unknown, phase: "store") => void,
): string | undefined {
  try {
    return metaNamespaceKeyFunc(object);
  } catch (err) {
    report(err, "store");
    return undefined;
  }
}
