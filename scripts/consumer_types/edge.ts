// A consumer of the packed package on an edge runtime (Workers-like): no DOM lib, no
// @types/node (`lib: ["ES2023"]`, `types: []`), strict, skipLibCheck false. It imports the
// core and the edge-safe kubeconfig entry point and uses them for real, so that a type that
// silently became `any` or needs a lib the consumer lacks fails the check (scripts/check_consumer_types.mjs).
import {
  Indexer,
  Informer,
  KubeClient,
  type KubeObject,
  KubeStatusError,
  metaNamespaceKeyFunc,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  Reflector,
  resourceListerWatcher,
  type RunOptions,
} from "kube-reflector";
import {
  connectKubeConfig,
  KubeConfig,
  KubeConfigError,
  type KubeConnection,
  parseKubeConfig,
  TlsUnsupportedError,
} from "kube-reflector/kubeconfig/edge";
// Not for the edge, but their declarations too need neither @types/node nor the DOM lib.
import type * as nodeKubeconfig from "kube-reflector/kubeconfig";
import type * as metrics from "kube-reflector/metrics";

export type LoadOptions = nodeKubeconfig.LoadKubeConfigOptions;
export type Metrics = ReturnType<typeof metrics.prometheusMetrics>;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

// The signal comes from the runtime (an AbortController): this setup has no web types to name it.
export async function sync(
  kubeconfigText: string,
  signal: RunOptions["signal"],
): Promise<string[]> {
  const config: KubeConfig = parseKubeConfig(kubeconfigText, { name: "env.KUBECONFIG" });
  const contexts: string[] = config.contextNames();
  let conn: KubeConnection;
  try {
    conn = await connectKubeConfig(config, { context: contexts[0], userAgent: "edge-consumer" });
  } catch (err) {
    if (err instanceof TlsUnsupportedError) throw new Error(err.needs.join(", "));
    if (err instanceof KubeConfigError) throw new Error(err.field ?? "");
    throw err;
  }
  const lw = resourceListerWatcher<ConfigMap>(conn.client, {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: conn.namespace,
  });
  const store = new Indexer<ConfigMap>(metaNamespaceKeyFunc, {
    [NAMESPACE_INDEX]: namespaceIndexFunc,
  });
  const reflector = new Reflector(lw, store, {
    name: "configmaps",
    expectedKind: "ConfigMap",
    onError: (err: unknown) => {
      if (err instanceof KubeStatusError && err.code === 410) return;
    },
  });
  const done: Promise<void> = reflector.run({ signal });
  await reflector.synced;
  const rv: string | undefined = reflector.lastSyncResourceVersion;
  const names = store.byIndex(NAMESPACE_INDEX, conn.namespace).map((cm) => cm.data?.x ?? rv ?? "");
  // @ts-expect-error the store holds ConfigMaps, not strings (fails if the types became `any`)
  const wrong: string = store.list()[0];
  void wrong;
  void done;
  await conn.close();

  const client = new KubeClient({ server: "https://k8s.example.com", token: () => "t" });
  const href: string = client.server.href;
  const informer = new Informer(
    resourceListerWatcher<ConfigMap>(client, {
      apiVersion: "v1",
      resource: "configmaps",
    }),
    { name: "configmaps" },
  );
  informer.addEventHandler({ onAdd: (cm) => void names.push(cm.metadata.name ?? href) });
  return names;
}

// Checkpoints at the edge: a Workers-KV-like binding, catch-up with a budget.
import { catchUp, type CatchUpResult } from "kube-reflector";
import { type KeyValueNamespaceLike, kvCheckpointStorage } from "kube-reflector/checkpoint";
import type * as fileCheckpoints from "kube-reflector/checkpoint/file";
import type * as denoKvCheckpoints from "kube-reflector/checkpoint/deno-kv";

export type FileStorage = typeof fileCheckpoints.fileCheckpointStorage;
export type DenoKvStorage = typeof denoKvCheckpoints.denoKvCheckpointStorage;
export async function edgeCatchUp(kv: KeyValueNamespaceLike, server: string): Promise<string[]> {
  const lw = resourceListerWatcher(new KubeClient({ server }), {
    apiVersion: "v1",
    resource: "configmaps",
  });
  const r: CatchUpResult<KubeObject> = await catchUp(lw, {
    storage: kvCheckpointStorage(kv),
    key: "cms",
    budgetMs: 5_000,
  });
  return r.changes.map((c) => `${c.type} ${c.key} ${c.object.metadata.resourceVersion}`);
}
