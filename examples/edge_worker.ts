/**
 * An edge Worker (Cloudflare Workers, workerd) that answers queries about a
 * cluster's objects without listing them: it keeps its checkpoint (every
 * object, and the resourceVersion they are exact at) in a KV namespace, and
 * each request, or a cron trigger, catches up from it with `catchUp`: one
 * tiny list (`limit=1`, for the version to reach) and a short watch. Only
 * the first run, or one after the server's window, lists everything.
 *
 *   GET /objects?labelSelector=app%3Dweb
 *   → {"resourceVersion":"812","complete":true,"listed":null,"changes":2,"progress":null,"items":["edge/web-1"]}
 *
 * `items` are the keys (`namespace/name`) of the objects matching the
 * selector, sorted; `changes` counts what changed since the previous
 * checkpoint; `listed` says why everything was listed, when it was.
 * `complete: false` means the budget ran out before the answer was proven
 * current: `items` are then those of an older, consistent state (empty
 * before the first list has finished), and `resourceVersion` says which;
 * `progress` (`{ items, remaining }`) says how far a first list that did
 * not fit one budget got: the next runs go on from there.
 *
 * A request gets a short budget (someone is waiting for the answer); the
 * cron trigger's `scheduled()` gets a longer one, so that it is the run that
 * does the long work (the first list of a big collection) while requests
 * answer from the checkpoint.
 *
 * Bindings (examples/wrangler.toml, docs/edge.md): `KUBE_SERVER` (the API
 * server's URL), optional `KUBE_TOKEN` (a secret), `NAMESPACE` (default:
 * all), `API_VERSION` (default `v1`) and `RESOURCE` (default `configmaps`);
 * `CHECKPOINTS`, a KV namespace. Workers KV takes one write per second per
 * key: on a busy route, a failed save is only reported, and the next request
 * catches up from the previous checkpoint.
 * tests/workerd/edge_worker_example_smoke.mjs bundles this file with esbuild
 * and runs it on workerd against the test API server; README.md shows the
 * code below this comment, and tests/examples/readme_worker_snippet_test.ts
 * fails when the two differ.
 *
 * @module
 */
import { catchUp, KubeClient, LabelSelector, resourceListerWatcher } from "../mod.ts";
import { checkpointCache, type KeyValueNamespaceLike, kvCheckpointStorage } from "../checkpoint.ts";

/** What the Worker is bound to (wrangler.toml's vars, secrets and KV namespace). */
export interface Env {
  KUBE_SERVER?: string;
  KUBE_TOKEN?: string;
  NAMESPACE?: string;
  API_VERSION?: string;
  RESOURCE?: string;
  CHECKPOINTS?: KeyValueNamespaceLike;
}

/** The part of the Workers execution context used here. */
interface Context {
  waitUntil(promise: Promise<unknown>): void;
}

// A request's caller is waiting: after 5 s it gets what there is (`complete: false`).
const REQUEST_BUDGET_MS = 5_000;
// The cron trigger has no caller and may run for minutes: 25 s lets it do the long
// work (a first list of many objects, page by page) and, with the 5 s save that
// follows, still ends before the next minute's run starts.
const SCHEDULED_BUDGET_MS = 25_000;
// The checkpoint, decoded, for as long as the isolate lives: a warm request reads
// the head and the changes since from KV, not every object again.
const cache = checkpointCache();

/** Loads the checkpoint from KV, catches up with the cluster within `budgetMs`, saves. */
function catchUpFrom(env: Env, budgetMs: number) {
  if (!env.KUBE_SERVER) throw new Error("the KUBE_SERVER variable is not set");
  if (!env.CHECKPOINTS) throw new Error("the CHECKPOINTS KV namespace is not bound");
  const {
    NAMESPACE: namespace,
    API_VERSION: apiVersion = "v1",
    RESOURCE: resource = "configmaps",
  } = env;
  const client = new KubeClient({ server: env.KUBE_SERVER, token: env.KUBE_TOKEN });
  const lw = resourceListerWatcher(client, { apiVersion, resource, namespace });
  return catchUp(lw, {
    storage: kvCheckpointStorage(env.CHECKPOINTS, { prefix: "kube-reflector/" }),
    key: `${apiVersion}/${resource}/${namespace ?? "all"}`,
    budgetMs,
    cache,
  });
}

const json = (body: unknown, status = 200) => Response.json(body, { status });

export default {
  // GET /objects?labelSelector=app%3Dweb → the keys of the matching objects, from the checkpoint
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (request.method !== "GET" || url.pathname !== "/objects") {
      return json({ error: "not found: try GET /objects?labelSelector=..." }, 404);
    }
    let selector: LabelSelector;
    try {
      selector = LabelSelector.parse(url.searchParams.get("labelSelector") ?? "");
    } catch (err) {
      return json({ error: `bad labelSelector: ${(err as Error).message}` }, 400);
    }
    try {
      const r = await catchUpFrom(env, REQUEST_BUDGET_MS);
      const items = [...r.objects]
        .filter(([, o]) => selector.matches(o.metadata.labels))
        .map(([key]) => key);
      return json({
        resourceVersion: r.resourceVersion,
        complete: r.complete, // false: the budget ran out, this is an older state
        listed: r.listed ?? null,
        changes: r.changes.length,
        // a first list still going on across runs: how far it got
        progress: r.progress ?? null,
        items: items.sort(),
      });
    } catch (err) {
      // library errors name the request, never the token
      return json({ error: `catch-up failed: ${(err as Error).message}` }, 500);
    }
  },

  // the cron trigger (wrangler.toml's [triggers]): keeps the checkpoint fresh between requests
  scheduled(_event: { cron: string; scheduledTime: number }, env: Env, ctx: Context): void {
    ctx.waitUntil(catchUpFrom(env, SCHEDULED_BUDGET_MS));
  },
};
