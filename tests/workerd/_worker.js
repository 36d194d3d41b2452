// The worker that tests/workerd/workerd_smoke.mjs runs on workerd (Cloudflare's
// runtime), with no compatibility flags (no nodejs_compat): it imports the
// BUILT core (npm/esm/mod.js) module by module, unbundled, as tsc emitted it.
//
// POST / with {"server": <FakeApiServer URL>, "control": <driver URL>} runs a
// Reflector over ConfigMaps against the FakeApiServer, inside this one request
// (workerd ties I/O to the request that started it). Between phases it posts
// its store to the driver's control URL; the driver checks it, changes the
// server (objects, a 410 ERROR event) and answers with what the store must
// become (`expect`: the server's `ns/name@resourceVersion` list) or `abort`.
// The response is JSON: the final store, errors seen, and how run() ended.
import {
  Indexer,
  KubeClient,
  KubeStatusError,
  metaNamespaceKeyFunc,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  Reflector,
  resourceListerWatcher,
} from "../../npm/esm/mod.js";

const key = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;
const snapshot = (store) => store.list().map(key).sort();
const sameList = (a, b) => a.length === b.length && a.every((k, i) => k === b[i]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Races `promise` against a timer; rejects with `what` after `ms`. */
async function within(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((
        _,
        reject,
      ) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function run({ server, control }) {
  const lw = resourceListerWatcher(new KubeClient({ server }), {
    apiVersion: "v1",
    resource: "configmaps",
  });
  const store = new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  const errors = [];
  const abort = new AbortController();
  const reflector = new Reflector(lw, store, {
    name: "workerd-smoke",
    expectedKind: "ConfigMap",
    backoff: { initialMs: 20, capMs: 200, jitter: 0.5 },
    shortWatchMs: 50,
    onError: (error, phase) => errors.push({ error, phase }),
  });
  const phases = [];
  // Errors seen, deduplicated (a failing list retries many times), with counts.
  const errorSummary = () => {
    const byText = new Map();
    for (const { error, phase } of errors) {
      const e = {
        phase,
        name: error?.name,
        status: error instanceof KubeStatusError ? error.code : undefined,
        message: String(error?.message ?? error),
      };
      const text = JSON.stringify(e);
      byText.set(text, { ...e, count: (byText.get(text)?.count ?? 0) + 1 });
    }
    return [...byText.values()];
  };
  const done = reflector.run({ signal: abort.signal });
  let runOutcome = "pending";
  done.then(() => (runOutcome = "resolved"), (e) => (runOutcome = `rejected: ${e?.stack ?? e}`));
  try {
    await within(reflector.synced, 10_000, "reflector.synced");
    let phase = "synced";
    for (;;) {
      const res = await fetch(control, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          phase,
          hasSynced: reflector.hasSynced(),
          lastSyncResourceVersion: reflector.lastSyncResourceVersion,
          namespaceIndexSize: store.byIndex(NAMESPACE_INDEX, "fx").length,
          store: snapshot(store),
          errors: errorSummary(),
        }),
      });
      if (!res.ok) throw new Error(`control answered ${res.status}: ${await res.text()}`);
      const order = await res.json();
      phases.push({ phase, order: order.action });
      if (order.action === "abort") break;
      // action "expect": wait until the store is the server's objects.
      const start = Date.now();
      while (!sameList(snapshot(store), order.expect)) {
        if (Date.now() - start > 10_000) {
          throw new Error(`phase ${order.next}: store never became the server's objects`);
        }
        await sleep(5);
      }
      phase = order.next;
    }
    abort.abort();
    await within(done, 2_000, "run() to resolve after abort");
  } catch (err) {
    return {
      ok: false,
      error: String(err?.stack ?? err),
      phases,
      store: snapshot(store),
      errors: errorSummary(),
    };
  } finally {
    abort.abort();
  }
  return {
    ok: true,
    phases,
    runOutcome,
    hasSynced: reflector.hasSynced(),
    // keys and resourceVersions of the final store
    items: store.list().map((o) => ({
      key: `${o.metadata.namespace}/${o.metadata.name}`,
      resourceVersion: o.metadata.resourceVersion,
    })),
    errors: errorSummary(),
  };
}

export default {
  async fetch(request) {
    if (request.method !== "POST") return new Response("POST {server, control}\n", { status: 405 });
    const result = await run(await request.json());
    return Response.json(result, { status: result.ok ? 200 : 500 });
  },
};
