// The worker that tests/workerd/edge_bundle_smoke.mjs bundles with esbuild (platform browser,
// no externals) and runs on workerd with no compatibility flags: the BUILT core
// (npm/esm/mod.js) and edge-safe kubeconfig entry point (npm/esm/kubeconfig_edge.js), as a
// user's bundler would take them from the package.
//
// POST / with {"kubeconfig": <kubeconfig YAML text>} parses the kubeconfig, connects with its
// inline token, runs a Reflector over ConfigMaps until it has synced, and answers with the
// store's `ns/name@resourceVersion` keys; {"kubeconfig", "expectError": true} answers with the
// error that connecting gave (name, message, field).
import {
  Indexer,
  metaNamespaceKeyFunc,
  Reflector,
  resourceListerWatcher,
} from "../../npm/esm/mod.js";
import { connectKubeConfig, parseKubeConfig } from "../../npm/esm/kubeconfig_edge.js";

async function run({ kubeconfig, expectError }) {
  const config = parseKubeConfig(kubeconfig, { name: "request body" });
  let conn;
  try {
    conn = await connectKubeConfig(config);
  } catch (err) {
    if (expectError) return { name: err.name, message: err.message, field: err.field };
    throw err;
  }
  try {
    const lw = resourceListerWatcher(conn.client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: conn.namespace,
    });
    const store = new Indexer(metaNamespaceKeyFunc, {});
    const errors = [];
    const reflector = new Reflector(lw, store, {
      name: "edge-bundle",
      expectedKind: "ConfigMap",
      onError: (error) => errors.push(String(error?.message ?? error)),
    });
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    let timer;
    await Promise.race([
      reflector.synced,
      new Promise((_, reject) => timer = setTimeout(() => reject(new Error(`not synced: ${errors}`)), 10_000)),
    ]).finally(() => clearTimeout(timer));
    const keys = store.list()
      .map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`)
      .sort();
    ac.abort();
    await done;
    return {
      contexts: config.contextNames(),
      namespace: conn.namespace,
      via: conn.via,
      keys,
      lastSyncResourceVersion: reflector.lastSyncResourceVersion,
    };
  } finally {
    await conn.close();
  }
}

export default {
  async fetch(request) {
    if (request.method !== "POST") return new Response("POST {kubeconfig}\n", { status: 405 });
    try {
      return Response.json(await run(await request.json()));
    } catch (err) {
      return new Response(String(err?.stack ?? err), { status: 500 });
    }
  },
};
