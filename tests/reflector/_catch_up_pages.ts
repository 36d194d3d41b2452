/**
 * catchUp on a ManualClock over a ScriptedListerWatcher: the identity and
 * bookmark the tests share, a storage that counts its writes, lists whose
 * pages take 1 s each, and `run`/`complete` that run catchUp while fake
 * time moves on.
 *
 * @module
 */
import { cm, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

export const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };

/** A BOOKMARK at `rv`. */
export const bookmark = (rv: string) =>
  ({
    type: "BOOKMARK",
    object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
  }) as WatchEvent;

/** `n` ConfigMaps cm-00000, cm-00001, ... at `rv`, each with data `{ i }`. */
export const many = (n: number, rv = "5") =>
  Array.from({ length: n }, (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, rv, { i: String(i) }));

/** A storage that counts what is written, by key. */
export function counting(inner: CheckpointStorage = memoryCheckpointStorage()) {
  const puts: string[] = [];
  let bytes = 0;
  const storage: CheckpointStorage = {
    get: (k, o) => inner.get(k, o),
    delete: (k, o) => inner.delete(k, o),
    put: (k, data, o) => {
      puts.push(k);
      return inner.put(
        k,
        (async function* () {
          for await (const chunk of data) {
            bytes += chunk.byteLength;
            yield chunk;
          }
        })(),
        o,
      );
    },
  };
  return {
    storage,
    puts,
    get bytes() {
      return bytes;
    },
    reset() {
      puts.length = 0;
      bytes = 0;
    },
  };
}

/** A lister at `rv` with `objects`, a counting storage, and catchUp runs on key "k". */
export function setup(objects: KubeObject[], rv = "50") {
  const clock = new ManualClock(1_800_000_000_000);
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = objects;
  lw.resourceVersion = rv;
  const store = counting();
  const errors: Array<{ error: unknown; phase: string }> = [];
  /** Starts a run; time moves only when the test advances the clock. */
  const run = (options: Partial<CatchUpOptions> = {}) => {
    const state: { result?: CatchUpResult; failure?: unknown; settled: boolean } = {
      settled: false,
    };
    const promise = catchUp(lw, {
      storage: store.storage,
      key: "k",
      identity,
      clock,
      random: () => 0,
      onError: (error, phase) => errors.push({ error, phase }),
      ...options,
    }).then((r) => (state.result = r), (e) => (state.failure = e))
      .finally(() => (state.settled = true));
    return Object.assign(state, { promise });
  };
  /** Runs to the end, advancing fake time. */
  const complete = async (options: Partial<CatchUpOptions> = {}) => {
    const r = run(options);
    while (!r.settled) await clock.advance(100);
    if (r.failure) throw r.failure;
    return r.result!;
  };
  return { clock, lw, store, errors, run, complete };
}

/** How `paged` answers. */
export interface PagedOptions {
  /** A continue token the server no longer knows: answered 410 (after its 1 s). */
  expireToken?: string;
  /**
   * The server keeps a snapshot per version: a list reads the snapshot at
   * the lister's version, and its continue token (`c<end>@<rv>`) reads the
   * snapshot it was made at. Unset: tokens are `c<end>` over the lister's
   * current objects.
   */
  snapshots?: Map<string, KubeObject[]>;
}

/**
 * Lists in pages of the asked limit at the lister's version, each taking 1 s
 * of the lister's ManualClock; a limit=1 list answers at once.
 */
export function paged(lw: ScriptedListerWatcher, options: PagedOptions = {}) {
  const { expireToken, snapshots } = options;
  lw.onList = async (o: ListOptions): Promise<KubeList> => {
    if (o.limit === 1) return { metadata: { resourceVersion: lw.resourceVersion }, items: [] };
    await new Promise<void>((resolve) => lw.clock.setTimeout(resolve, 1_000));
    if (o.continue !== undefined && o.continue === expireToken) {
      throw new KubeStatusError({ code: 410 });
    }
    let rv = lw.resourceVersion, start = 0;
    if (o.continue && snapshots) {
      const m = /^c(\d+)@(\d+)$/.exec(o.continue)!;
      start = Number(m[1]);
      rv = m[2];
    } else if (o.continue) {
      start = Number(o.continue.slice(1));
    }
    const objects = snapshots ? snapshots.get(rv)! : lw.objects;
    const limit = o.limit ?? objects.length;
    const end = Math.min(start + limit, objects.length);
    const more = end < objects.length;
    const token = snapshots ? `c${end}@${rv}` : `c${end}`;
    return {
      metadata: {
        resourceVersion: rv,
        ...(more ? { continue: token, remainingItemCount: objects.length - end } : {}),
      },
      items: objects.slice(start, end),
    };
  };
}
