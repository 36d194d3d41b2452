/**
 * A Reflector with a checkpoint over a ScriptedListerWatcher whose watch the
 * test feeds event by event, on a ManualClock.
 *
 * @module
 */
import { cm, events, ScriptedListerWatcher, untilAborted } from "./_scripted_lister_watcher.ts";
import type { KubeObject, WatchEvent } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import type { WatchOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

export const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };

/** A watch fed by `push`, open until aborted. */
export function feed() {
  const queue: WatchEvent[] = [];
  let wake: (() => void) | undefined;
  return {
    push(...events: WatchEvent[]) {
      queue.push(...events);
      wake?.();
    },
    watch: async function* (o: WatchOptions): AsyncGenerator<WatchEvent> {
      o.onConnected?.();
      const aborted = untilAborted(o.signal);
      while (!o.signal?.aborted) {
        while (queue.length) yield queue.shift()!;
        await Promise.race([new Promise<void>((r) => (wake = r)), aborted]);
      }
    },
  };
}

/** What the "server" holds when the Reflector starts. */
export interface StartOptions {
  objects?: KubeObject[];
  resourceVersion?: string;
  /** A watch from this version is answered 410 Expired (a version the server does not know). */
  expired?: string;
}

/**
 * Runs a Reflector with the checkpoint "k" in `storage` (no save on stop)
 * over a fed watch; `apply` pushes events and waits for their version.
 */
export async function start(storage: CheckpointStorage, options: StartOptions = {}) {
  const { objects = [cm("a", "5"), cm("b", "6")], resourceVersion = "10", expired } = options;
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = objects;
  lw.resourceVersion = resourceVersion;
  const f = feed();
  lw.onWatch = (o) => {
    if (expired !== undefined && o.resourceVersion === expired) {
      return events(
        [{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } } as never],
        o,
        "close",
      );
    }
    return f.watch(o);
  };
  const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
    clock,
    random: () => 0,
    useStreamingList: false,
    onError: () => {},
    checkpoint: { storage, key: "k", identity, saveOnStop: false },
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  await clock.flush();
  /** Applies `events` and waits until the reflector is at `rv`. */
  const apply = async (rv: string, ...events: WatchEvent[]) => {
    f.push(...events);
    while (reflector.lastSyncResourceVersion !== rv) await clock.advance(1);
  };
  const stop = async () => {
    ac.abort();
    await clock.flush();
    await done;
  };
  return { clock, lw, reflector, apply, stop };
}
