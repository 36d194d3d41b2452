/**
 * The main job: a reflector keeping a store of ConfigMaps in sync while the
 * server churns and faults, ending with the check store = server.
 *
 * With no arguments it starts the embedded test API server (testkit.ts)
 * with a few hundred objects, creates, updates and deletes objects at
 * random, injects faults (410s, dropped connections, malformed lines, HTML
 * error pages, split chunks, a server outage), prints what the store holds
 * as it converges, and exits 0 only if the store equals the server.
 *
 * While it runs it serves Prometheus metrics on http://127.0.0.1:9464/metrics
 * (`--metrics-port`, 0 = a free port) and prints a few lines of a scrape at the end.
 *
 * With a cluster configured — `--server URL` (plain HTTP, for example
 * `kubectl proxy` on http://127.0.0.1:8001), `--kubeconfig PATH`,
 * `--context NAME`, or the `KUBECONFIG` variable — it reflects that
 * cluster's ConfigMaps (read-only) for `--seconds`, then compares the store
 * with a fresh consistent list.
 *
 *   npm run main-job [-- --objects 300 --seconds 8 --server URL]
 *   deno run --allow-net --allow-env --allow-read examples/main_job.ts [--objects 300] [--seconds 8] [--server URL]
 *   node npm/esm/examples/main_job.js   (after `npm run build:npm`)
 *
 * @module
 */
import {
  KubeClient,
  type KubeObject,
  listAllPages,
  newNamespaceKeyedIndexerAndReflector,
  resourceListerWatcher,
} from "../mod.ts";
import { FakeApiServer } from "../testkit.ts";
import { prometheusMetrics } from "../metrics.ts";
import { loadKubeConfig } from "../kubeconfig.ts";
import * as promClient from "prom-client";
import { createServer } from "node:http";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
function arg(name: string, fallback: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
}
function exit(code: number): never {
  if (g.Deno) g.Deno.exit(code);
  g.process.exit(code);
  throw new Error("unreachable");
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const objects = Number(arg("objects", "300"));
const seconds = Number(arg("seconds", "8"));
const namespaces = ["alpha", "beta", "gamma"];

// A cluster is "configured" when --server (plain HTTP, e.g. kubectl proxy),
// --kubeconfig / --context, or the KUBECONFIG variable says so; otherwise
// the embedded test API server is used.
const env = g.Deno ? g.Deno.env.toObject() : g.process.env;
const kubeconfigPath = arg("kubeconfig", "");
const context = arg("context", "");
const useKubeconfig = Boolean(kubeconfigPath || context || env.KUBECONFIG);
const connection = useKubeconfig
  ? await loadKubeConfig({ path: kubeconfigPath || undefined, context: context || undefined })
    .catch((err: Error) => {
      console.error(`cannot use the configured cluster: ${err.message}`);
      return exit(2);
    })
  : undefined;
const external = arg("server", "") || connection?.server || "";
const server = external
  ? undefined
  : await FakeApiServer.start({ historySize: 200, maxWatchMs: 2_000 });
const url = external || server!.url;
console.log(external ? `reflecting ConfigMaps from ${url}` : `embedded test API server on ${url}`);

let seq = 0;
const makeCm = (ns: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: `cm-${seq++}`, namespace: ns, labels: { app: "demo" } },
  data: { value: String(Math.random()), text: "héllo ✓ 日本" },
});
if (server) { for (let i = 0; i < objects; i++) server.create(makeCm(namespaces[i % 3])); }

const client = connection?.client ?? new KubeClient({ server: url });
const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
const errorCounts = new Map<string, number>();
const metrics = prometheusMetrics({ client: promClient });
let storeSize = () => 0;
const reflectorMetrics = metrics.reflector("configmaps", { storeSize: () => storeSize() });
const metricsServer = createServer((_req, res) => {
  promClient.register.metrics().then((text) => {
    res.setHeader("content-type", promClient.register.contentType);
    res.end(text);
  });
});
await new Promise<void>((resolve) =>
  metricsServer.listen(Number(arg("metrics-port", "9464")), "127.0.0.1", resolve)
);
const metricsAddress = metricsServer.address();
const metricsUrl = `http://127.0.0.1:${
  typeof metricsAddress === "object" && metricsAddress ? metricsAddress.port : 0
}/metrics`;
console.log(`metrics on ${metricsUrl}`);
const { indexer, reflector } = newNamespaceKeyedIndexerAndReflector(lw, {
  observer: reflectorMetrics,
  name: "configmaps",
  expectedKind: "ConfigMap",
  backoff: { initialMs: 100, capMs: 1_000 },
  idleTimeoutMs: external ? undefined : 1_500,
  onError: (err) => {
    const name = err instanceof Error ? err.name : "Error";
    errorCounts.set(name, (errorCounts.get(name) ?? 0) + 1);
  },
});
storeSize = () => indexer.size;
const ac = new AbortController();
const started = Date.now();
const done = reflector.run({ signal: ac.signal });
await reflector.synced;
console.log(
  `synced in ${
    Date.now() - started
  } ms: ${indexer.list().length} objects at RV ${reflector.lastSyncResourceVersion}`,
);

const status = () => {
  const per = namespaces.map((ns) => `${ns}=${indexer.byIndex("namespace", ns).length}`).join(" ");
  const errs = [...errorCounts].map(([k, v]) => `${k}×${v}`).join(" ") || "none";
  const target = server
    ? ` server=${
      server.objects({ resource: "configmaps" }).length
    } serverRV=${server.resourceVersion}`
    : "";
  return `store=${indexer.list().length} (${per}) rv=${reflector.lastSyncResourceVersion}${target} handled errors: ${errs}`;
};

if (server) {
  const faults = [
    () => server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } }),
    () => server.inject({ verb: "watch", fault: { kind: "reset", afterEvents: 3 } }),
    () =>
      server.inject({
        verb: "watch",
        fault: { kind: "raw", data: "<html><body>502 Bad Gateway</body></html>\n", then: "close" },
      }),
    () => server.inject({ verb: "watch", fault: { kind: "status", code: 500, body: "html" } }),
    () =>
      server.inject({
        verb: "watch",
        fault: { kind: "chunked", chunkSize: "random", seed: 1, maxChunkSize: 13 },
      }),
    () => server.inject({ verb: "watch", fault: { kind: "stall" } }),
    () =>
      server.inject({ verb: "watch", fault: { kind: "status", code: 429, retryAfterSeconds: 1 } }),
  ];
  const end = Date.now() + seconds * 1000;
  let tick = 0;
  let nextStatus = Date.now() + 500;
  while (Date.now() < end) {
    const ns = namespaces[Math.floor(Math.random() * 3)];
    const existing = server.objects({ resource: "configmaps", namespace: ns });
    const r = Math.random();
    if (r < 0.4 || existing.length === 0) server.create(makeCm(ns));
    else if (r < 0.75) {
      const o = existing[Math.floor(Math.random() * existing.length)];
      server.update({ ...o, data: { value: String(Math.random()) } });
    } else {
      const o = existing[Math.floor(Math.random() * existing.length)];
      server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: o.metadata.name! });
    }
    if (++tick % 60 === 0) {
      faults[(tick / 60) % faults.length]();
      server.endWatches();
    }
    if (tick === 400) {
      console.log("server outage: refusing connections for 1 s (objects change meanwhile)");
      void server.refuseConnections(1_000);
    }
    if (Date.now() >= nextStatus) {
      console.log(status());
      nextStatus += 500;
    }
    await sleep(10);
  }
} else {
  await sleep(seconds * 1000);
}

// Converge, then check store = server.
const expected = async (): Promise<Map<string, string | undefined>> => {
  const items = server
    ? server.objects({ resource: "configmaps" })
    : (await listAllPages(lw, { resourceVersion: "" })).items;
  return new Map(
    items.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion]),
  );
};
const same = async () => {
  const want = await expected();
  const have = indexer.list();
  return have.length === want.size &&
    have.every((o) =>
      want.get(`${o.metadata.namespace}/${o.metadata.name}`) === o.metadata.resourceVersion
    );
};
const deadline = Date.now() + 15_000;
let ok = await same();
while (!ok && Date.now() < deadline) {
  await sleep(100);
  ok = await same();
}
console.log(status());
const scrape = await (await fetch(metricsUrl)).text();
console.log(`a scrape of ${metricsUrl} (excerpt):`);
for (const line of scrape.split("\n")) {
  if (
    /^kube_reflector_(lists_total|watches_total|short_watches_total|relists_total|watch_errors_total|store_objects|last_resource_version)\{/
      .test(line)
  ) {
    console.log(`  ${line}`);
  }
}
ac.abort();
await done;
reflectorMetrics.dispose();
await new Promise((resolve) => metricsServer.close(resolve));
await server?.close();
await connection?.close();
if (ok) {
  console.log(
    `converged: store = server (${indexer.list().length} objects, each at the server's resourceVersion)`,
  );
  exit(0);
}
console.error("NOT converged: the store differs from the server");
exit(1);
