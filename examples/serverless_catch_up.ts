/**
 * A serverless script: wake, load the last checkpoint, catch up with what
 * changed in the cluster since the last run, print it, save, exit. Run it on
 * a schedule (cron, a Lambda or Cloud Run job): within the API server's
 * window (minutes to hours, depending on the cluster's write rate) each run
 * costs one tiny list (`limit=1`) and one short watch, however many objects
 * there are; the first run, or one after too long, lists everything once.
 *
 *   deno run --allow-net --allow-env --allow-read --allow-write examples/serverless_catch_up.ts \
 *     --checkpoint-dir ./state [--kubeconfig PATH | --server URL] [--namespace NS] [--resource configmaps]
 *   node npm/esm/examples/serverless_catch_up.js --checkpoint-dir ./state ...   (after `npm run build:npm`)
 *
 * It prints one line per change, then a summary line starting with
 * `summary:` (JSON: the counts, whether a list was needed, the requests
 * made). Exit code 0 when it caught up completely, 3 when its budget ran
 * out first (what it applied is saved), 2 on a configuration error.
 *
 * @module
 */
import { catchUp, KubeClient, type ListerWatcher, resourceListerWatcher } from "../mod.ts";
import { fileCheckpointStorage } from "../checkpoint_file.ts";
import { loadKubeConfig } from "../kubeconfig.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
const arg = (name: string, fallback = ""): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
};
const exit = (code: number): never => {
  if (g.Deno) g.Deno.exit(code);
  g.process.exit(code);
  throw new Error("unreachable");
};

const dir = arg("checkpoint-dir");
if (!dir) {
  console.error("--checkpoint-dir DIR is required (where the checkpoint is kept between runs)");
  exit(2);
}
const resource = arg("resource", "configmaps");
const apiVersion = arg("api-version", "v1");
const budgetMs = Number(arg("budget-ms", "20000"));

const server = arg("server");
const conn = server ? undefined : await loadKubeConfig({ path: arg("kubeconfig") || undefined })
  .catch((err: Error) => {
    console.error(`cannot load the kubeconfig: ${err.message}`);
    return exit(2);
  });
const client = conn?.client ?? new KubeClient({ server });
const namespace = arg("namespace") || conn?.namespace;
const base = resourceListerWatcher(client, { apiVersion, resource, namespace });
// Count what the run costs: every list and watch request.
const requests: string[] = [];
const lw: ListerWatcher = {
  ...base,
  list: (o) => (requests.push(o.limit === 1 ? "list(limit=1)" : "list"), base.list(o)),
  watch: (o) => (requests.push("watch"), base.watch(o)),
  watchBatches: undefined,
};

try {
  const r = await catchUp(lw, {
    storage: fileCheckpointStorage(dir),
    key: `${resource}.${namespace ?? "all"}`,
    budgetMs,
  });
  for (const c of r.changes) {
    console.log(`${c.type} ${c.key} ${c.object.metadata.resourceVersion}`);
  }
  console.log(`summary: ${
    JSON.stringify({
      changes: r.changes.length,
      objects: r.objects.size,
      resourceVersion: r.resourceVersion,
      complete: r.complete,
      listed: r.listed ?? null,
      saved: r.saved?.count ?? null,
      // what the save wrote: "none" without a change, "log" for the changes, "base" for a snapshot
      written: r.saved?.written ?? null,
      bytesWritten: r.saved?.bytes ?? null,
      ...(r.progress ? { progress: r.progress } : {}),
      requests,
    })
  }`);
  await conn?.close();
  exit(r.complete ? 0 : 3);
} catch (err) {
  console.error(`catch-up failed: ${err instanceof Error ? err.message : String(err)}`);
  await conn?.close();
  exit(1);
}
