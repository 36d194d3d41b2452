/**
 * Shared helpers of the reflector tests: a reflector over ConfigMaps run
 * against the fake API server over real HTTP, an `eventually` poll that
 * leaves no timer behind, and the "store = server" check.
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
import type { ErrorPhase } from "../src/reflector/watcher_options.ts";
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

/** Polls `cond` every 5 ms until it holds; fails after `timeoutMs`. */
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
  store: Indexer<KubeObject>;
  reflector: Reflector<KubeObject>;
  errors: Array<{ error: unknown; phase: ErrorPhase; at: number }>;
  done: Promise<void>;
  abort: AbortController;
  client: KubeClient;
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
    const store = new Indexer<KubeObject>(metaNamespaceKeyFunc, {
      [NAMESPACE_INDEX]: namespaceIndexFunc,
    });
    const errors: Running["errors"] = [];
    const reflector = new Reflector(lw, store, {
      name: "test",
      expectedKind: "ConfigMap",
      ...FAST,
      onError: (error, phase) => errors.push({ error, phase, at: Date.now() }),
      ...options.reflector,
    });
    if (options.start !== false) done = reflector.run({ signal: abort.signal });
    await fn({ server, store, reflector, errors, done, abort, client });
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
