/**
 * Reflector helpers of the e2e tests: a running reflector over one
 * resource, random create/update/delete churn through the admin client,
 * and the "store = server" check against a fresh (consistent) list.
 *
 * @module
 */
import {
  Indexer,
  type KubeClient,
  type KubeObject,
  metaNamespaceKeyFunc,
  Reflector,
  type ReflectorOptions,
  resourceListerWatcher,
  resourcePath,
  StreamingListUnsupportedError,
} from "../../mod.ts";
import { eventually } from "./_cluster.ts";

/** A running reflector and what it reported. */
export interface RunningReflector {
  store: Indexer<KubeObject>;
  reflector: Reflector<KubeObject>;
  errors: Array<{ error: unknown; phase: string }>;
  stop(): Promise<void>;
}

/** What to reflect. */
export interface Target {
  apiVersion: string;
  resource: string;
  kind: string;
  namespace: string;
}

/** Starts a reflector over `target` through `client` with fast backoff. */
export function startReflector(
  client: KubeClient,
  target: Target,
  options: ReflectorOptions = { backoff: { initialMs: 100, capMs: 1000 } },
): RunningReflector {
  const lw = resourceListerWatcher(client, {
    apiVersion: target.apiVersion,
    resource: target.resource,
    namespace: target.namespace,
  });
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  const errors: RunningReflector["errors"] = [];
  const reflector = new Reflector(lw, store, {
    name: `e2e-${target.resource}`,
    expectedKind: target.kind,
    onError: (error, phase) => errors.push({ error, phase }),
    ...options,
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  return {
    store,
    reflector,
    errors,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

/** Creates a namespace. */
export async function createNamespace(admin: KubeClient, name: string): Promise<void> {
  await admin.requestJson("/api/v1/namespaces", {
    method: "POST",
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name } },
  });
}

/** name → resourceVersion of a fresh consistent list. */
export async function serverState(
  client: KubeClient,
  target: Target,
): Promise<Map<string, string>> {
  const path = resourcePath({
    apiVersion: target.apiVersion,
    resource: target.resource,
    namespace: target.namespace,
  });
  const list = await client.requestJson<{ items: KubeObject[] }>(path);
  return new Map(list.items.map((o) => [o.metadata.name!, o.metadata.resourceVersion!]));
}

/** name → resourceVersion held by the store. */
export function storeState(store: Indexer<KubeObject>): Map<string, string> {
  return new Map(store.list().map((o) => [o.metadata.name!, o.metadata.resourceVersion!]));
}

function same(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** Waits until the store equals a fresh list, object by object and RV by RV. */
export async function assertStoreEqualsServer(
  r: RunningReflector,
  admin: KubeClient,
  target: Target,
  timeoutMs = 30_000,
): Promise<void> {
  let last: [Map<string, string>, Map<string, string>] | undefined;
  await eventually(
    async () => {
      last = [storeState(r.store), await serverState(admin, target)];
      return same(...last);
    },
    `store = server for ${target.resource} in ${target.namespace}`,
    timeoutMs,
  ).catch((err) => {
    const [s, v] = last ?? [new Map(), new Map()];
    const diff = [...new Set([...s.keys(), ...v.keys()])].filter((k) => s.get(k) !== v.get(k))
      .slice(0, 10)
      .map((k) => `${k}: store ${s.get(k)} server ${v.get(k)}`);
    throw new Error(
      `${err.message}; store ${s.size}, server ${v.size}; first differences: ${diff.join("; ")}`,
    );
  });
}

/** A ConfigMap. */
export function configMap(
  name: string,
  namespace: string,
  data: Record<string, string>,
): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data } as KubeObject;
}

/** A small seeded PRNG, so that a failure can be replayed. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `ops` random creates, updates (PUT of the last read object) and deletes
 * of ConfigMaps in `namespace`, `concurrency` at a time.
 */
export async function churnConfigMaps(
  admin: KubeClient,
  namespace: string,
  options: { ops: number; seed?: number; concurrency?: number; prefix?: string },
): Promise<{ created: number; updated: number; deleted: number }> {
  const { ops, seed = 1, concurrency = 4, prefix = "cm" } = options;
  const random = rng(seed);
  const live = new Map<string, KubeObject>();
  const busy = new Set<string>();
  const counts = { created: 0, updated: 0, deleted: 0 };
  let next = 0;
  const base = `/api/v1/namespaces/${namespace}/configmaps`;
  const one = async (i: number) => {
    const names = [...live.keys()].filter((n) => !busy.has(n));
    const roll = random();
    if (names.length < 5 || roll < 0.4) {
      const name = `${prefix}-${next++}`;
      busy.add(name);
      live.set(
        name,
        await admin.requestJson<KubeObject>(base, {
          method: "POST",
          body: configMap(name, namespace, { i: String(i) }),
        }),
      );
      busy.delete(name);
      counts.created++;
      return;
    }
    const name = names[Math.floor(random() * names.length)];
    busy.add(name);
    try {
      if (roll < 0.75) {
        const obj = { ...live.get(name)!, data: { i: String(i), r: String(random()) } };
        live.set(
          name,
          await admin.requestJson<KubeObject>(`${base}/${name}`, { method: "PUT", body: obj }),
        );
        counts.updated++;
      } else {
        await admin.requestJson(`${base}/${name}`, { method: "DELETE" });
        live.delete(name);
        counts.deleted++;
      }
    } finally {
      busy.delete(name);
    }
  };
  let issued = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (issued < ops) await one(issued++);
  }));
  return counts;
}

/**
 * The errors a reflector reported, less the one expected notice: a server
 * without streaming lists (1.20) refusing the first one.
 */
export function unexpectedErrors(r: RunningReflector): RunningReflector["errors"] {
  return r.errors.filter((e) => !(e.error instanceof StreamingListUnsupportedError));
}
