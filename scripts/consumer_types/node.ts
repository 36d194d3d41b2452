// A consumer of the packed package on Node: `lib: ["ES2023"]` + @types/node (no DOM lib),
// strict, skipLibCheck false. It uses every entry point for real (the Node-only testkit and
// kubeconfig loaders included), so that a type that silently became `any` or needs the DOM lib
// fails the check (scripts/check_consumer_types.mjs).
import {
  Indexer,
  Informer,
  KubeClient,
  type KubeObject,
  metaNamespaceKeyFunc,
  Reflector,
  resourceListerWatcher,
  watcher,
} from "kube-reflector";
import {
  createTlsFetch,
  KubeConfig,
  loadKubeConfig,
  MissingPackageError,
  readKubeConfig,
} from "kube-reflector/kubeconfig";
import { connectKubeConfig } from "kube-reflector/kubeconfig/edge";
import { FakeApiServer } from "kube-reflector/testkit";
import { noopMetrics } from "kube-reflector/metrics";

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

export async function main(): Promise<void> {
  const server = await FakeApiServer.start({});
  const client = new KubeClient({
    server: server.url,
    headers: { "x-trace": "1" }, // HeadersInit without the DOM lib
    fetch: (input, init) => fetch(input, init),
  });
  const lw = resourceListerWatcher<Pod>(client, { apiVersion: "v1", resource: "pods" });
  const store = new Indexer<Pod>(metaNamespaceKeyFunc, {});
  const ac = new AbortController();
  const reflector = new Reflector(lw, store, { name: "pods", expectedKind: "Pod" });
  const done = reflector.run({ signal: ac.signal });
  await reflector.synced;
  const nodes: (string | undefined)[] = store.list().map((p) => p.spec?.nodeName);
  // @ts-expect-error the store holds Pods (fails if the types became `any`)
  const wrong: number = store.list()[0];
  void wrong;

  const informer = new Informer(lw, { name: "pods", metrics: noopMetrics });
  const running = informer.run({ signal: ac.signal });
  for await (const event of watcher(lw, { signal: ac.signal })) {
    if (event.type === "ADDED") nodes.push(event.object.metadata.name);
    break;
  }
  ac.abort();
  await Promise.all([done, running]);

  const config: KubeConfig = await readKubeConfig({ text: "{}" });
  const conn = await loadKubeConfig({ config, context: "dev", execStderr: "ignore" });
  const edge = await connectKubeConfig("{}");
  const tls = await createTlsFetch({ ca: "..." }).catch((err: unknown) => {
    if (err instanceof MissingPackageError) console.error(err.install);
    throw err;
  });
  const res = await tls.fetch(`${conn.server}/version`);
  console.log(res.status, nodes, edge.namespace, await res.text());
  await Promise.all([conn.close(), edge.close(), tls.close(), server.close()]);
}
