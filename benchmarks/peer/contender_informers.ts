/**
 * The peer benchmark's `informers` workload: one process holding many
 * informers, one per resource and namespace (`--resources R --namespaces N`:
 * R × N watches, as a controller watching R resources in N namespaces),
 * against the TLS server of `_h2_server.ts` (HTTP/2 with the HTTP/1.1
 * fallback). Runs on Node (`npm/esm/benchmarks/peer/contender_informers.js`)
 * and on Deno (this file, run directly), and reads no `node:v8` or
 * `perf_hooks` API so that both measure alike.
 *
 * `--client`:
 * - `us`: our `Informer`s over one connection set up by the kubeconfig entry
 *   point (`loadKubeConfig` with the test CA: on Node an undici `Agent`, on
 *   Deno `Deno.createHttpClient`), with `--http2 true|false` (the `http2`
 *   option; default true);
 * - `peer`: `@kubernetes/client-node`'s `makeInformer` per watch, its
 *   `KubeConfig` with the same CA, listing with `CustomObjectsApi`
 *   (`--client-node <its dist/index.js>`).
 *
 * Measures: time until every informer has synced (and its handler seen
 * every object); then, after 1 s to settle, the server's count of open
 * connections; an idle window (`--idle-ms`), then a window with MODIFIED
 * events trickling at `--trickle-rate` per second spread over every watch
 * (`--trickle-ms`): over each, the process's CPU time (user + system) scaled
 * to a minute, then RSS and the heap after forced GCs. Prints one `RESULT`
 * line (as `_driver.ts` does).
 *
 * @module
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { Buffer } from "node:buffer";
import { Informer, type KubeObject, resourceListerWatcher } from "../../mod.ts";
import { loadKubeConfig } from "../../kubeconfig.ts";

const GROUP = "bench.example.com";

const argv = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : dflt;
};
const server = arg("server", "");
const controlUrl = arg("control", "");
const ca = readFileSync(arg("ca", ""), "utf8");
const client = arg("client", "us");
const http2 = arg("http2", "true") !== "false";
const resources = Number(arg("resources", "2"));
const namespaces = Number(arg("namespaces", "25"));
const perWatch = Number(arg("per-watch", "4"));
const idleMs = Number(arg("idle-ms", "20000"));
const trickleMs = Number(arg("trickle-ms", "20000"));
const trickleRate = Number(arg("trickle-rate", "10"));
/** Longer than this to sync every informer is a failure, reported with what the server sees. */
const syncTimeoutMs = Number(arg("sync-timeout-ms", "120000"));
const runtime = "Deno" in globalThis ? "deno" : "node";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const heapAfterGc = () => {
  if (typeof g.gc === "function") { for (let i = 0; i < 4; i++) g.gc(); }
  return process.memoryUsage().heapUsed;
};
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
async function control(name: string, params: Record<string, string | number> = {}) {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${controlUrl}/bench/${name}?${qs}`, { method: "POST" });
  const text = await res.text();
  if (!res.ok) throw new Error(`control ${name}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, number>;
}

/** Informers synced so far. */
let syncedCount = 0;

interface Started {
  /** Resolves when every informer has synced and its handler has seen every object. */
  synced: Promise<void>;
  /** Update handler calls so far. */
  updates(): number;
}

const pairs: { resource: string; namespace: string }[] = [];
for (let r = 0; r < resources; r++) {
  for (let n = 0; n < namespaces; n++) pairs.push({ resource: `res${r}`, namespace: `ns-${n}` });
}

async function startOurs(): Promise<Started> {
  const conn = await loadKubeConfig(
    {
      text: JSON.stringify({
        "current-context": "bench",
        clusters: [{
          name: "bench",
          cluster: {
            server,
            "certificate-authority-data": Buffer.from(ca).toString("base64"),
          },
        }],
        users: [{ name: "bench", user: { token: "bench-token" } }],
        contexts: [{ name: "bench", context: { cluster: "bench", user: "bench" } }],
      }),
      // the HTTP/2 option of the kubeconfig entry point (issue 30); cast while it is not yet typed
      http2,
    } as Parameters<typeof loadKubeConfig>[0],
  );
  let updates = 0;
  const ac = new AbortController();
  const synced = pairs.map(async ({ resource, namespace }) => {
    const lw = resourceListerWatcher<KubeObject>(conn.client, {
      apiVersion: `${GROUP}/v1`,
      resource,
      namespace,
    });
    const informer = new Informer<KubeObject>(lw, {
      name: `${resource}/${namespace}`,
      onError: (err: unknown, phase: string) =>
        console.error(`[us] ${resource}/${namespace} ${phase}: ${String(err)}`),
    });
    let adds = 0;
    let allAdded!: () => void;
    const added = new Promise<void>((resolve) => (allAdded = resolve));
    informer.addEventHandler({
      onAdd: () => {
        if (++adds === perWatch) allAdded();
      },
      onUpdate: () => void updates++,
      onDelete: () => {},
    });
    void informer.run({ signal: ac.signal });
    await informer.waitForSync();
    if (adds < perWatch) await added;
    syncedCount++;
  });
  return { synced: Promise.all(synced).then(() => {}), updates: () => updates };
}

// client-node is loaded before the heap is read (its code is no informer's heap), as our modules are.
// deno-lint-ignore no-explicit-any
const k8s: any = client === "peer"
  ? await import(pathToFileURL(arg("client-node", "")).href)
  : undefined;

function startPeer(): Started {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "bench", server, caData: Buffer.from(ca).toString("base64") }],
    users: [{ name: "bench", token: "bench-token" }],
    contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
    currentContext: "bench",
  });
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  let updates = 0;
  const synced = pairs.map(async ({ resource, namespace }) => {
    const listFn = () =>
      api.listNamespacedCustomObject({ group: GROUP, version: "v1", namespace, plural: resource });
    const informer = k8s.makeInformer(
      kc,
      `/apis/${GROUP}/v1/namespaces/${namespace}/${resource}`,
      listFn,
    );
    let adds = 0;
    informer.on("add", () => void adds++);
    informer.on("update", () => void updates++);
    informer.on("delete", () => {});
    informer.on("error", (err: unknown) => console.error(`[peer] error: ${String(err)}`));
    await informer.start();
    if (adds !== perWatch) throw new Error(`peer: ${adds} adds after start, ${perWatch} expected`);
    syncedCount++;
  });
  return { synced: Promise.all(synced).then(() => {}), updates: () => updates };
}

// One request first, so that no contender's time includes loading fetch on first use.
await control("stats");
const heapBefore = heapAfterGc();
const rssBefore = process.memoryUsage.rss();
const t0 = performance.now();
const started = client === "peer" ? startPeer() : await startOurs();
let syncTimer: ReturnType<typeof setTimeout> | undefined;
const timedOut = new Promise<"timeout">((resolve) => {
  syncTimer = setTimeout(() => resolve("timeout"), syncTimeoutMs);
});
if (await Promise.race([started.synced, timedOut]) === "timeout") {
  const st = await control("stats");
  console.error(
    `not synced after ${
      syncTimeoutMs / 1000
    } s: ${syncedCount} of ${pairs.length} informers synced; ` +
      `the server has ${st.connections} connection(s) open (${st.h2Accepted} h2 and ${st.h1Accepted} ` +
      `HTTP/1.1 accepted) and ${st.watches} watches open, maxConcurrentStreams ${st.maxConcurrentStreams}`,
  );
  process.exit(1);
}
clearTimeout(syncTimer);
const syncMs = performance.now() - t0;
await sleep(1000);
const afterSync = await control("stats");

/** CPU, RSS and heap over one window. */
async function window(ms: number) {
  const c0 = cpuMs();
  const w0 = performance.now();
  await sleep(ms);
  const cpu = cpuMs() - c0;
  const elapsed = performance.now() - w0;
  const rssBytes = process.memoryUsage.rss();
  return { cpuMsPerMin: (cpu * 60_000) / elapsed, rssBytes, heapBytes: heapAfterGc() };
}

heapAfterGc(); // the sync's garbage is not the idle window's work
const idle = await window(idleMs);
const updates0 = started.updates();
const { trickled: trickled0 } = await control("trickle", { rate: trickleRate });
const trickle = await window(trickleMs);
const { trickled: trickled1 } = await control("trickle", { rate: 0 });
await sleep(300); // the last events reach the handlers
const updates = started.updates() - updates0;
const end = await control("stats");
process.stdout.write(
  `RESULT ${
    JSON.stringify({
      contender: client,
      runtime,
      http2,
      workload: "informers",
      informers: pairs.length,
      perWatch,
      syncMs,
      connections: afterSync.connections,
      connectionsAfter: end.connections,
      accepted: end.accepted,
      h2Connections: end.h2Accepted,
      h1Connections: end.h1Accepted,
      watchesOpen: afterSync.watches,
      maxConcurrentStreams: end.maxConcurrentStreams,
      heapBeforeBytes: heapBefore,
      rssBeforeBytes: rssBefore,
      idleCpuMsPerMin: idle.cpuMsPerMin,
      idleRssBytes: idle.rssBytes,
      idleHeapBytes: idle.heapBytes - heapBefore,
      idleHeapTotalBytes: idle.heapBytes,
      trickleCpuMsPerMin: trickle.cpuMsPerMin,
      trickleRssBytes: trickle.rssBytes,
      trickleHeapBytes: trickle.heapBytes - heapBefore,
      trickleEvents: trickled1 - trickled0,
      trickleEventsSeen: updates,
      idleMs,
      trickleMs,
    })
  }\n`,
  () => process.exit(0),
);
