/**
 * Shared helpers of the reflector tests: a reflector over ConfigMaps run
 * against the fake API server over real HTTP, waits that are woken by what
 * they wait for (a store write, a reported error, an observer call, a
 * server change) instead of polling, and the "store = server" check.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../src/api/types.ts";
import { Indexer } from "../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../src/cache/key_func.ts";
import { NAMESPACE_INDEX, namespaceIndexFunc } from "../src/cache/namespace_index.ts";
import { KubeClient } from "../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../src/transport/resource_lister_watcher.ts";
import { Reflector, type ReflectorOptions } from "../src/reflector/reflector.ts";
import type { ErrorPhase, WatcherObserver } from "../src/reflector/watcher_options.ts";
import type { KeyFunc } from "../src/cache/key_func.ts";
import type { Indexers } from "../src/cache/indexer.ts";
import { FakeApiServer, type FakeApiServerOptions } from "../testkit.ts";

/**
 * Short durations so that recovery happens in milliseconds; list + watch
 * (the fake server answers streaming lists 422, as 1.20 does: the tests that
 * exercise streaming lists and the default ask for them).
 */
export const FAST: ReflectorOptions = {
  useStreamingList: false,
  backoff: { initialMs: 20, capMs: 200, jitter: 0.5 },
  shortWatchMs: 50,
};

/**
 * Conditions woken by change instead of a polling timer: each is checked
 * at once and again after every `notify()`. Whoever changes what a
 * condition reads calls `notify()`: `withReflector` does after every store
 * write, reported error and observer call, and `follow(server)` after every
 * change the fake server reports (a request logged, a watch opened or
 * ended, an object written).
 */
export class Changes {
  readonly #checks = new Set<() => void>();

  /** Re-checks every pending condition. */
  notify = (): void => {
    for (const check of [...this.#checks]) check();
  };

  /** Resolves once `cond()` holds; fails, naming `what`, after `timeoutMs`. */
  until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const settle = (error?: Error) => {
        this.#checks.delete(check);
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        try {
          if (cond()) settle();
        } catch (error) {
          settle(error as Error);
        }
      };
      const timer = setTimeout(
        () => settle(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)),
        timeoutMs,
      );
      this.#checks.add(check);
    });
  }

  /** Also re-checks after every change `server` reports, until `signal` aborts. */
  follow(server: FakeApiServer, signal: AbortSignal): void {
    server.waitFor(() => {
      this.notify();
      return false;
    }, { signal, timeoutMs: Infinity }).catch(() => {});
  }
}

/**
 * An Indexer that calls `changed` after each write (add, update, delete,
 * replace, restore), once the write's caller has finished: a microtask
 * later, so that a Reflector has also moved its `lastSyncResourceVersion`.
 */
export class NotifyingIndexer<T extends KubeObject = KubeObject> extends Indexer<T> {
  readonly #changed: () => void;

  constructor(keyFunc: KeyFunc<T>, indexers: Indexers<T>, changed: () => void) {
    super(keyFunc, indexers);
    this.#changed = changed;
  }

  override add(obj: T): void {
    try {
      super.add(obj);
    } finally {
      queueMicrotask(this.#changed);
    }
  }

  override update(obj: T): void {
    try {
      super.update(obj);
    } finally {
      queueMicrotask(this.#changed);
    }
  }

  override delete(obj: T): void {
    try {
      super.delete(obj);
    } finally {
      queueMicrotask(this.#changed);
    }
  }

  override replace(items: T[], resourceVersion: string): void {
    try {
      super.replace(items, resourceVersion);
    } finally {
      queueMicrotask(this.#changed);
    }
  }
}

/**
 * An observer that calls `changed` (a microtask later) after each of its
 * calls, records each backoff wait announced with the server's request
 * count at that moment, and forwards every call to `user`.
 */
export function notifyingObserver(
  changed: () => void,
  waits: Wait[],
  server: FakeApiServer,
  user: WatcherObserver = {},
): WatcherObserver {
  const forward = (key: keyof WatcherObserver) => (...args: unknown[]) => {
    queueMicrotask(changed);
    (user[key] as ((...a: unknown[]) => void) | undefined)?.apply(user, args);
  };
  return {
    listDone: forward("listDone"),
    listFailed: forward("listFailed"),
    relist: forward("relist"),
    watchStart: forward("watchStart"),
    watchEnd: forward("watchEnd"),
    event: forward("event"),
    state: (info) => {
      if (info.state === "waiting") waits.push({ ms: info.waitMs!, seq: server.requestCount });
      forward("state")(info);
    },
  };
}

/** A backoff wait the reflector announced (`observer.state` "waiting"). */
export interface Wait {
  /** How long it waits. */
  ms: number;
  /** The server's `requestCount` when it began: it follows request `seq` and precedes `seq + 1`. */
  seq: number;
}

/**
 * Polls `cond` every 5 ms until it holds; fails after `timeoutMs`. Prefer a
 * wait woken by what it waits for: `Running.until`/`converged`, a
 * `Changes`, the server's `waitFor`/`waitForRequests`/`waitForWatch`, or a
 * promise resolved by the callback that makes the condition true.
 */
export async function eventually(
  cond: () => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A ConfigMap named `name` in `namespace`. */
export function configMap(
  name: string,
  namespace = "fx",
  data: Record<string, string> = {},
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace, labels: { app: "demo" } },
    data,
  };
}

/** What a running test reflector exposes. */
export interface Running {
  server: FakeApiServer;
  store: NotifyingIndexer<KubeObject>;
  reflector: Reflector<KubeObject>;
  errors: Array<{ error: unknown; phase: ErrorPhase }>;
  done: Promise<void>;
  abort: AbortController;
  client: KubeClient;
  /** Every backoff wait the reflector announced, in order. */
  waits: Wait[];
  /**
   * Resolves once `cond()` holds, checked after every store write, reported
   * error, observer call and server change: no polling.
   */
  until(cond: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Resolves once store = server (in `namespace`), as `until` checks. */
  converged(namespace?: string): Promise<void>;
}

/**
 * Starts a fake server seeded with `seed` ConfigMaps, runs `fn` with a
 * reflector over them, then stops the reflector and the server whatever
 * happens.
 */
export async function withReflector(
  options: {
    server?: FakeApiServerOptions;
    reflector?: ReflectorOptions;
    seed?: number;
    namespace?: string;
    start?: boolean;
    beforeStart?: (server: FakeApiServer) => void | Promise<void>;
  },
  fn: (r: Running) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start(options.server ?? {});
  const abort = new AbortController();
  const changes = new Changes();
  changes.follow(server, abort.signal);
  let done: Promise<void> = Promise.resolve();
  try {
    for (let i = 0; i < (options.seed ?? 5); i++) {
      server.create(configMap(`cm-${i}`, "fx", { i: String(i) }));
    }
    await options.beforeStart?.(server);
    const client = new KubeClient({ server: server.url });
    const lw = resourceListerWatcher(client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: options.namespace,
    });
    const store = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {
      [NAMESPACE_INDEX]: namespaceIndexFunc,
    }, changes.notify);
    const errors: Running["errors"] = [];
    const waits: Wait[] = [];
    const reflector = new Reflector(lw, store, {
      name: "test",
      expectedKind: "ConfigMap",
      ...FAST,
      onError: (error, phase) => {
        errors.push({ error, phase });
        changes.notify();
      },
      ...options.reflector,
      observer: notifyingObserver(changes.notify, waits, server, options.reflector?.observer),
    });
    if (options.start !== false) done = reflector.run({ signal: abort.signal });
    const until = (cond: () => boolean, what: string, timeoutMs?: number) =>
      changes.until(cond, what, timeoutMs);
    const converged = (namespace?: string) =>
      until(() => storeEqualsServer(store, server, namespace), "store = server");
    await fn({ server, store, reflector, errors, done, abort, client, waits, until, converged });
  } finally {
    abort.abort();
    await done;
    await server.close();
  }
}

/** Asserts store = server: the same keys, each at the server's resourceVersion. */
export function assertStoreEqualsServer(
  store: Indexer<KubeObject>,
  server: FakeApiServer,
  namespace?: string,
): void {
  const expected = new Map(
    server.objects({ resource: "configmaps", namespace }).map((o) => [
      `${o.metadata.namespace}/${o.metadata.name}`,
      o.metadata.resourceVersion,
    ]),
  );
  const actual = new Map(
    store.list().map((
      o,
    ) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]),
  );
  assert.deepEqual([...actual.entries()].sort(), [...expected.entries()].sort());
}

/** True when the store equals the server (for `eventually`). */
export function storeEqualsServer(
  store: Indexer<KubeObject>,
  server: FakeApiServer,
  namespace?: string,
): boolean {
  try {
    assertStoreEqualsServer(store, server, namespace);
    return true;
  } catch {
    return false;
  }
}

/** The server's logged requests of one verb. */
export function requestsOf(server: FakeApiServer, verb: "list" | "watch") {
  return server.requests.filter((r) => r.verb === verb);
}

/**
 * The backoff waits the reflector announced after request `from` and before
 * request `to` (two of the server's logged requests).
 */
export function waitsBetween(
  waits: readonly Wait[],
  from: { seq: number },
  to: { seq: number },
): number[] {
  return waits.filter((w) => w.seq >= from.seq && w.seq < to.seq).map((w) => w.ms);
}

/** Resolves with the server's logged requests of `verb` once there are `count`. */
export function requestsAtLeast(
  server: FakeApiServer,
  verb: "list" | "watch",
  count: number,
  timeoutMs?: number,
) {
  return server.waitForRequests((r) => r.verb === verb, { count, timeoutMs });
}

/**
 * Resolves with what `promise` resolves to; fails, naming `what`, if it has
 * not settled within `timeoutMs` (a guard against a hang, not a measure of
 * speed).
 */
export async function settles<T>(
  promise: Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: not settled after ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
