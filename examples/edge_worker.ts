/**
 * An edge Worker (Cloudflare Workers, workerd) that answers queries about a
 * cluster's objects without listing them: it keeps its checkpoint (every
 * object, and the resourceVersion they are exact at) in a KV namespace, and
 * each request, or a cron trigger, catches up from it with `catchUp`: one
 * tiny list (`limit=1`, for the version to reach) and a short watch. Only
 * the first run, or one after the server's window, lists everything.
 *
 *   GET /objects?labelSelector=app%3Dweb
 *   → {"resourceVersion":"812","complete":true,"listed":null,"changes":2,"items":["edge/web-1"]}
 *
 * `items` are the keys (`namespace/name`) of the objects matching the
 * selector, sorted; `changes` counts what changed since the previous
 * checkpoint; `listed` says why everything was listed, when it was.
 *
 * Bindings (wrangler.toml): `KUBE_SERVER` (the API server's URL), optional
 * `KUBE_TOKEN` (a secret), `NAMESPACE` (default: all), `API_VERSION`
 * (default `v1`) and `RESOURCE` (default `configmaps`); `CHECKPOINTS`, a KV
 * namespace. Workers KV takes one write per second per key: on a busy route,
 * a failed save is only reported, and the next request catches up from the
 * previous checkpoint. tests/workerd/edge_worker_example_smoke.mjs bundles
 * this file with esbuild and runs it on workerd against the test API server.
 *
 * @module
 */
import { catchUp, KubeClient, LabelSelector, resourceListerWatcher } from "../mod.ts";
import { type KeyValueNamespaceLike, kvCheckpointStorage } from "../checkpoint.ts";

/** What the Worker is bound to. */
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

/** Loads the checkpoint, catches up with the cluster, saves: at most 5 s. */
function catchUpFrom(env: Env) {
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
    budgetMs: 5_000,
  });
}

const json = (body: unknown, status = 200) => Response.json(body, { status });

export default {
  async fetch(request: Request, env: Env, _ctx: Context): Promise<Response> {
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
      const r = await catchUpFrom(env);
      const items = [...r.objects]
        .filter(([, o]) => selector.matches(o.metadata.labels))
        .map(([key]) => key);
      return json({
        resourceVersion: r.resourceVersion,
        complete: r.complete,
        listed: r.listed ?? null,
        changes: r.changes.length,
        items: items.sort(),
      });
    } catch (err) {
      // library errors name the request, never the token
      return json({ error: `catch-up failed: ${(err as Error).message}` }, 500);
    }
  },

  scheduled(_event: { cron: string; scheduledTime: number }, env: Env, ctx: Context): void {
    ctx.waitUntil(catchUpFrom(env));
  },
};
