/**
 * The peer benchmark's peer: `@kubernetes/client-node`'s informer
 * (`makeInformer` over its `ListWatch`), with one handler per verb, loaded
 * from the benchmark's cache folder (`--client-node <path to its
 * dist/index.js>`; it is not a dependency of this repository). Its list
 * function pages through the list 500 objects at a time with the generated
 * API (`limit`/`continue`), as our reflector lists by default; the
 * informer itself calls it once per (re)list. Synced when `start()` has
 * resolved (the list has been applied and every add handler called, the
 * watch requested). Run by `scripts/bench_peer.mjs`.
 *
 * @module
 */
import process from "node:process";
import { pathToFileURL } from "node:url";
import { type BenchObject, runContender } from "./_driver.ts";

const path = process.argv[process.argv.indexOf("--client-node") + 1];
// deno-lint-ignore no-explicit-any
const k8s: any = await import(pathToFileURL(path).href);

await runContender("peer", (ctx) => {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "bench", server: ctx.server, skipTLSVerify: true }],
    users: [{ name: "bench" }],
    contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
    currentContext: "bench",
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const listPage = ctx.resource === "pods"
    ? (p: object) => api.listPodForAllNamespaces(p)
    : (p: object) => api.listConfigMapForAllNamespaces(p);
  const listFn = async () => {
    const items: BenchObject[] = [];
    let cont: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page = await listPage({ limit: 500, _continue: cont });
      for (const item of page.items) items.push(item);
      resourceVersion ??= page.metadata?.resourceVersion;
      cont = page.metadata?._continue || undefined;
    } while (cont);
    return { apiVersion: "v1", kind: "List", metadata: { resourceVersion }, items };
  };
  const informer = k8s.makeInformer(kc, `/api/v1/${ctx.resource}`, listFn);
  let adds = 0;
  informer.on("add", () => void adds++);
  informer.on("update", (obj: BenchObject) => ctx.onModified(obj));
  informer.on("delete", () => {});
  informer.on("error", (err: unknown) => console.error(`[peer] error: ${String(err)}`));
  return {
    async start() {
      await informer.start();
      if (adds !== ctx.objects) {
        throw new Error(`peer: ${adds} adds after start, ${ctx.objects} expected`);
      }
    },
    size: () => informer.list().length,
    resourceVersion: (ns: string, name: string) =>
      informer.get(name, ns)?.metadata?.resourceVersion,
  };
});
