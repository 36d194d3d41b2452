/**
 * An in-memory ListerWatcher for informer unit tests: a versioned object
 * map with an event log, live watch streams that honour their signal, and
 * knobs to delete behind the watch's back and to expire resourceVersions.
 *
 * @module
 */
import assert from "node:assert/strict";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import type {
  ListerWatcher,
  ListOptions,
  WatchOptions,
} from "../../src/transport/lister_watcher.ts";

interface Stream {
  queue: WatchEvent[];
  wake?: () => void;
  closed?: boolean;
}

/** A ConfigMap-like object. */
export function obj(
  name: string,
  namespace = "ns",
  labels: Record<string, string> = {},
): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, labels }, data: {} };
}

export class FakeListerWatcher implements ListerWatcher {
  lists = 0;
  /** Streaming lists refused (with 422, as kube-apiserver 1.20 does). */
  streamingRefusals = 0;
  /** The resourceVersion of every watch request, in order. */
  watchRvs: string[] = [];
  #objects = new Map<string, KubeObject>();
  #rv = 100;
  #minRv = 0;
  #log: { rv: number; ev: WatchEvent }[] = [];
  #streams = new Set<Stream>();

  constructor(initial: KubeObject[] = []) {
    for (const o of initial) {
      const stored = structuredClone(o);
      stored.metadata.resourceVersion = String(++this.#rv);
      this.#objects.set(keyOf(o), stored);
    }
  }

  get resourceVersion(): string {
    return String(this.#rv);
  }

  get liveWatches(): number {
    return this.#streams.size;
  }

  /** Creates or updates `o` (ADDED or MODIFIED). */
  apply(o: KubeObject): KubeObject {
    const key = keyOf(o);
    const type = this.#objects.has(key) ? "MODIFIED" : "ADDED";
    const stored = structuredClone(o);
    stored.metadata.resourceVersion = String(++this.#rv);
    this.#objects.set(key, stored);
    this.#emit({ type, object: structuredClone(stored) });
    return stored;
  }

  /** Deletes `key` with a DELETED event. */
  remove(key: string): void {
    const old = this.#objects.get(key);
    assert.ok(old, `no object ${key}`);
    this.#objects.delete(key);
    const final = structuredClone(old);
    final.metadata.resourceVersion = String(++this.#rv);
    this.#emit({ type: "DELETED", object: final });
  }

  /** Changes the server while no watch sees it; history is compacted. */
  behindTheWatch(change: (objects: Map<string, KubeObject>, nextRv: () => string) => void): void {
    change(this.#objects, () => String(++this.#rv));
    this.#minRv = this.#rv;
    this.#log = [];
  }

  /** Sends a BOOKMARK at the current resourceVersion to live watches. */
  bookmark(): void {
    const ev: WatchEvent = {
      type: "BOOKMARK",
      object: { kind: "ConfigMap", metadata: { resourceVersion: String(++this.#rv) } },
    };
    for (const s of this.#streams) push(s, ev);
  }

  /** Ends live watches with an ERROR 410 event. */
  expire(): void {
    const ev: WatchEvent = {
      type: "ERROR",
      object: {
        kind: "Status",
        status: "Failure",
        reason: "Expired",
        code: 410,
        message: "too old resource version",
      },
    };
    for (const s of this.#streams) push(s, ev);
  }

  /** Ends live watches cleanly, as a server does at `timeoutSeconds`. */
  close(): void {
    for (const s of this.#streams) {
      s.closed = true;
      push(s, undefined);
    }
  }

  /** The server's objects, by key, at their resourceVersion. */
  state(): Map<string, string | undefined> {
    return new Map([...this.#objects].map(([k, o]) => [k, o.metadata.resourceVersion]));
  }

  list(options: ListOptions): Promise<KubeList> {
    options.signal?.throwIfAborted();
    this.lists++;
    return Promise.resolve({
      kind: "ConfigMapList",
      metadata: { resourceVersion: String(this.#rv) },
      items: [...this.#objects.values()].map((o) => structuredClone(o)),
    });
  }

  async *watch(options: WatchOptions): AsyncGenerator<WatchEvent, void, undefined> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (options.sendInitialEvents) {
      // as kube-apiserver before 1.27: no streaming lists
      this.streamingRefusals++;
      throw new KubeStatusError({ code: 422, status: { reason: "Invalid", code: 422 } });
    }
    this.watchRvs.push(options.resourceVersion ?? "");
    const from = Number(options.resourceVersion || this.#rv);
    if (from < this.#minRv) {
      throw new KubeStatusError({ code: 410, status: { reason: "Expired", code: 410 } });
    }
    const stream: Stream = { queue: this.#log.filter((e) => e.rv > from).map((e) => e.ev) };
    this.#streams.add(stream);
    options.onConnected?.();
    try {
      while (true) {
        signal?.throwIfAborted();
        const ev = stream.queue.shift();
        if (ev === undefined && stream.closed) return;
        if (ev) {
          yield structuredClone(ev);
          if (ev.type === "ERROR") return;
          continue;
        }
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => reject(signal!.reason);
          stream.wake = () => {
            signal?.removeEventListener("abort", onAbort);
            resolve();
          };
          signal?.addEventListener("abort", onAbort, { once: true });
        });
      }
    } finally {
      this.#streams.delete(stream);
    }
  }

  #emit(ev: WatchEvent): void {
    this.#log.push({ rv: this.#rv, ev });
    for (const s of this.#streams) push(s, ev);
  }
}

function push(s: Stream, ev: WatchEvent | undefined): void {
  if (ev) s.queue.push(ev);
  const wake = s.wake;
  s.wake = undefined;
  wake?.();
}

function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!;
}

/** Polls `cond` every 2 ms until it holds; fails after `timeoutMs`. Leaves no timer. */
export async function until(cond: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Options that make recovery immediate. */
export const FAST = {
  useStreamingList: false,
  backoff: { initialMs: 1, capMs: 5, jitter: 0 },
  shortWatchMs: 0,
} as const;
