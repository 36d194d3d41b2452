/**
 * A ListerWatcher driven by the test, for recovery-rule tests on a
 * ManualClock: each list and watch call is recorded with the fake time it
 * was made at, and answered by a function the test sets (default: a list
 * of the current objects, and a watch that stays open until aborted).
 *
 * @module
 */
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import type {
  ListerWatcher,
  ListOptions,
  WatchOptions,
} from "../../src/transport/lister_watcher.ts";
import type { ManualClock } from "../../testkit.ts";
import type { ServerFeatures } from "../../src/transport/server_features.ts";

/** One recorded call. */
export interface Call {
  verb: "list" | "watch";
  at: number;
  rv: string | undefined;
  options: ListOptions | WatchOptions;
}

/** A ConfigMap-like object at `rv`. */
export function cm(name: string, rv: string, data: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: "ns", resourceVersion: rv },
    data,
  };
}

/** A watch event line as a ListerWatcher yields it. */
export function ev(type: WatchEvent["type"], object: KubeObject): WatchEvent {
  return { type, object } as WatchEvent;
}

/** Waits until `signal` aborts (a watch that stays open and quiet). */
export function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Yields `events`, then stays open until aborted (or ends, with `end`). */
export async function* events(
  list: WatchEvent[],
  options: WatchOptions,
  end: "open" | "close" = "open",
): AsyncGenerator<WatchEvent> {
  options.onConnected?.();
  for (const e of list) yield e;
  if (end === "open") await untilAborted(options.signal);
}

export class ScriptedListerWatcher implements ListerWatcher {
  readonly calls: Call[] = [];
  /** What the watcher learns of this "server" (set it to test per-server memory). */
  features?: ServerFeatures;
  /** Reads the "server's" version; unset: the ListerWatcher cannot. */
  serverVersion?: (options: { signal?: AbortSignal }) => Promise<void>;
  objects: KubeObject[] = [];
  resourceVersion = "10";
  /** Answers a list; default: the current objects at the current version. */
  onList: (options: ListOptions, n: number) => KubeList | Promise<KubeList> = () => ({
    metadata: { resourceVersion: this.resourceVersion },
    items: this.objects,
  });
  /** Answers a watch; default: open and quiet until aborted. */
  onWatch: (options: WatchOptions, n: number) => AsyncIterable<WatchEvent> = (o) => events([], o);

  constructor(readonly clock: ManualClock) {}

  list(options: ListOptions): Promise<KubeList> {
    const n = this.calls.filter((c) => c.verb === "list").length;
    this.calls.push({ verb: "list", at: this.clock.now(), rv: options.resourceVersion, options });
    return Promise.resolve().then(() => this.onList(options, n));
  }

  watch(options: WatchOptions): AsyncIterable<WatchEvent> {
    const n = this.calls.filter((c) => c.verb === "watch").length;
    this.calls.push({ verb: "watch", at: this.clock.now(), rv: options.resourceVersion, options });
    return this.onWatch(options, n);
  }

  /** The calls of one verb. */
  of(verb: "list" | "watch"): Call[] {
    return this.calls.filter((c) => c.verb === verb);
  }
}
