// The runtime matrix's conformance subset (scripts/runtime_matrix.mjs), the
// same code in every runtime: it imports nothing; the runtime's entry
// (tests/matrix/_runner_*.mjs, _worker_entry.mjs, _edge_entry.mjs) passes
// the library as the user got it (the installed tarball, or mod.ts by URL)
// and the driver's URLs. The driver (Node) runs the testkit's FakeApiServer
// and a control endpoint through which these checks change the server's
// objects, inject faults and read its request log, over loopback fetch.
//
// Each check returns { name, status: "pass" | "fail" | "unsupported", ms, note }.

/** The checks, in order (the driver's table rows). */
export const CHECKS = [
  ["sync", "initial list into an Indexer"],
  ["watch", "watch events applied (ADDED/MODIFIED/DELETED)"],
  ["relist410", "410 Gone → relist"],
  ["reconnect", "dropped connection → rewatch, no relist"],
  ["abort", "abort ends run() promptly, nothing pending"],
  ["informer", "informer handlers (add/update/delete)"],
  ["tls", "client certificate from a kubeconfig"],
];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Throws `message` unless `cond`. */
function expect(cond, message) {
  if (!cond) throw new Error(message);
}

/** Races `promise` against `ms`; rejects naming `what`. */
async function within(promise, ms, what) {
  let timer;
  try {
    return await Promise.race([
      promise,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The driver's control endpoint: one POST per operation, JSON in and out. */
function controller(url) {
  return async (op, args = {}) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ op, ...args }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`control ${op}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
}

/** Polls `cond` (sync or async) every 10 ms until it holds; throws after `timeoutMs`. */
async function eventually(cond, what, timeoutMs = 5_000) {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for: ${what}`);
    await sleep(10);
  }
}

const objKey = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;
const snapshot = (store) => store.list().map(objKey).sort();
const same = (a, b) => a.length === b.length && a.every((k, i) => k === b[i]);
const diff = (have, want) =>
  `missing ${JSON.stringify(want.filter((k) => !have.includes(k)))}, extra ${
    JSON.stringify(have.filter((k) => !want.includes(k)))
  }`;

/**
 * Runs every check against the driver. `lib` is the core module (mod),
 * `kubeconfig` the kubeconfig module or an Error saying why it could not
 * be loaded; `tls` = { server, ca, cert, key } (PEM) for the TLS check.
 */
export async function conformance({ lib, kubeconfig, control, tls, runtime }) {
  const ctl = controller(control);
  const results = [];
  const run = async (name, fn) => {
    const start = Date.now();
    let status = "pass";
    let note;
    try {
      const r = await fn();
      if (r && typeof r === "object" && r.unsupported) {
        status = "unsupported";
        note = r.unsupported;
      } else note = r;
    } catch (err) {
      status = "fail";
      note = String(err?.stack ?? err);
    }
    results.push({ name, status, ms: Date.now() - start, ...(note ? { note: String(note) } : {}) });
    return status === "pass";
  };
  const state = () => ctl("state");

  const {
    Indexer,
    Informer,
    KubeClient,
    KubeNetworkError,
    KubeStatusError,
    metaNamespaceKeyFunc,
    NAMESPACE_INDEX,
    namespaceIndexFunc,
    Reflector,
    resourceListerWatcher,
  } = lib;
  const { server } = await state();
  const lw = resourceListerWatcher(new KubeClient({ server }), {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: "fx",
  });
  const quick = { backoff: { initialMs: 20, capMs: 200, jitter: 0.5 }, shortWatchMs: 50 };

  // ---- a Reflector: sync, watch, 410, reconnect, abort ----
  const store = new Indexer(metaNamespaceKeyFunc, { [NAMESPACE_INDEX]: namespaceIndexFunc });
  const errors = [];
  const reflector = new Reflector(lw, store, {
    name: `matrix-${runtime}`,
    expectedKind: "ConfigMap",
    ...quick,
    onError: (error, phase) => errors.push({ error, phase }),
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  let outcome = "pending";
  done.then(() => (outcome = "resolved"), (e) => (outcome = `rejected: ${e?.stack ?? e}`));
  const storeIsServer = async () => same(snapshot(store), (await state()).keys);

  const synced = await run("sync", async () => {
    await within(reflector.synced, 10_000, "reflector.synced");
    expect(reflector.hasSynced(), "hasSynced() is false");
    const s = await state();
    expect(same(snapshot(store), s.keys), `store ≠ server: ${diff(snapshot(store), s.keys)}`);
    expect(store.byIndex(NAMESPACE_INDEX, "fx").length === s.keys.length, "namespace index");
    expect(s.lists.length === 1, `${s.lists.length} lists, want 1`);
    return `${s.keys.length} objects`;
  });

  const watched = synced && await run("watch", async () => {
    await eventually(async () => (await state()).watches.length >= 1, "a watch");
    await ctl("create", { name: "new" });
    await ctl("update", { name: "cm-1", data: { changed: "yes" } });
    await ctl("delete", { name: "cm-2" });
    await eventually(storeIsServer, "store = server");
    expect(store.getByKey("fx/cm-1")?.data?.changed === "yes", "cm-1 not updated");
    expect(store.getByKey("fx/cm-2") === undefined, "cm-2 not deleted");
    expect((await state()).lists.length === 1, "relisted");
  });

  const relisted = watched && await run("relist410", async () => {
    const rv = reflector.lastSyncResourceVersion;
    await ctl("inject", { rule: { verb: "watch", fault: { kind: "error-event", code: 410 } } });
    await ctl("endWatches");
    await eventually(async () => (await state()).lists.length === 2, "a relist");
    const relist = (await state()).lists[1];
    expect(relist.rv === rv, `relist at resourceVersion ${relist.rv}, want ${rv}`);
    await ctl("create", { name: "after-410" });
    await ctl("delete", { name: "cm-3" });
    await eventually(storeIsServer, "store = server");
    expect(
      errors.some((e) => e.error instanceof KubeStatusError && e.error.code === 410),
      `no KubeStatusError 410 reported: ${errors.map((e) => e.error?.name)}`,
    );
    return `relisted at resourceVersion ${rv}`;
  });

  const reconnected = relisted && await run("reconnect", async () => {
    const before = await state();
    await ctl("inject", { rule: { verb: "watch", fault: { kind: "reset", afterEvents: 2 } } });
    await ctl("endWatches");
    for (let i = 0; i < 4; i++) await ctl("create", { name: `r-${i}` });
    await ctl("update", { name: "cm-4", data: { after: "reset" } });
    await eventually(
      () => errors.some((e) => e.error instanceof KubeNetworkError && e.phase === "watch"),
      "a KubeNetworkError in the watch phase",
    );
    await eventually(storeIsServer, "store = server");
    const after = await state();
    expect(after.lists.length === before.lists.length, "relisted after a dropped connection");
    const resumed = after.watches.slice(before.watches.length + 1);
    expect(resumed.length >= 1, "no watch after the reset");
    expect(resumed.every((w) => w.rv !== "0"), "rewatch from resourceVersion 0");
    return `${after.watches.length - before.watches.length} watches, 0 relists`;
  });

  await run("abort", async () => {
    expect(reconnected || outcome === "pending", `run() ended early: ${outcome}`);
    const start = Date.now();
    ac.abort();
    await within(done.catch(() => {}), 2_000, "run() to settle after abort");
    expect(outcome === "resolved", `run() ${outcome}`);
    const ms = Date.now() - start;
    await eventually(async () => (await state()).openWatches === 0, "the server to see no watch");
    return `run() resolved ${ms} ms after abort`;
  });

  // ---- an Informer's handlers ----
  await run("informer", async () => {
    const informer = new Informer(lw, { name: `matrix-informer-${runtime}`, ...quick });
    const seen = [];
    informer.addEventHandler({
      onAdd: (o, initial) => seen.push(`add ${o.metadata.name}${initial ? " (initial)" : ""}`),
      onUpdate: (_old, o) => seen.push(`update ${o.metadata.name} ${o.data?.v ?? ""}`),
      onDelete: (o) => seen.push(`delete ${(o.obj ?? o).metadata.name}`),
    });
    const iac = new AbortController();
    const idone = informer.run({ signal: iac.signal });
    try {
      await within(informer.waitForSync(), 10_000, "informer sync");
      const n = (await state()).keys.length;
      await eventually(() => seen.length >= n, `${n} initial adds`);
      expect(seen.every((s) => s.endsWith("(initial)")), `not initial: ${seen}`);
      await eventually(async () => (await state()).openWatches >= 1, "the informer's watch");
      await ctl("create", { name: "inf-a" });
      await ctl("update", { name: "cm-5", data: { v: "2" } });
      await ctl("delete", { name: "cm-6" });
      const want = ["add inf-a", "update cm-5 2", "delete cm-6"];
      await eventually(() => want.every((w) => seen.includes(w)), `handlers: ${want}`);
      return `${n} initial adds, then ${want.join(", ")}`;
    } finally {
      iac.abort();
      await within(idone.catch(() => {}), 2_000, "informer.run() to settle after abort");
    }
  });

  // ---- TLS with a client certificate, from kubeconfig text ----
  await run("tls", () => tlsCheck({ kubeconfig, tls, runtime }));
  return results;
}

/**
 * Node, Deno and Bun make the connection (the server sees the client
 * certificate's CN); edge runtimes must refuse with a TlsUnsupportedError
 * naming the fields.
 */
async function tlsCheck({ kubeconfig, tls, runtime }) {
  if (kubeconfig instanceof Error) {
    // Could not be loaded or bundled: the message says why (its stack would point here).
    const err = new Error(kubeconfig.message);
    err.stack = `Error: ${kubeconfig.message}`;
    throw err;
  }
  if (!tls || tls.error) throw new Error(`the driver has no TLS server: ${tls?.error}`);
  const b64 = (s) => btoa(s);
  const text = JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "c",
    contexts: [{ name: "c", context: { cluster: "k", user: "u", namespace: "default" } }],
    clusters: [{
      name: "k",
      cluster: { server: tls.server, "certificate-authority-data": b64(tls.ca) },
    }],
    users: [{
      name: "u",
      user: { "client-certificate-data": b64(tls.cert), "client-key-data": b64(tls.key) },
    }],
  });
  const edge = runtime === "workerd" || runtime === "edge-runtime";
  let conn;
  try {
    // kube-reflector/kubeconfig (Node, Deno, Bun) has loadKubeConfig; the edge-safe entry
    // point (kube-reflector/kubeconfig/edge) has connectKubeConfig.
    conn = kubeconfig.loadKubeConfig
      ? await kubeconfig.loadKubeConfig({ text, env: {} })
      : await kubeconfig.connectKubeConfig(text);
  } catch (err) {
    if (
      edge && err?.name === "TlsUnsupportedError" && err instanceof kubeconfig.TlsUnsupportedError
    ) {
      expect(
        err.runtime === runtime,
        `TlsUnsupportedError.runtime ${err.runtime}, want ${runtime}`,
      );
      // `needs` names the kubeconfig fields (qualified: `users[u].user.client-key-data`).
      for (
        const field of ["certificate-authority-data", "client-certificate-data", "client-key-data"]
      ) {
        expect(
          err.needs.some((n) => n === field || n.endsWith(`.${field}`)),
          `TlsUnsupportedError.needs ${JSON.stringify(err.needs)} lacks ${field}`,
        );
      }
      return { unsupported: `TlsUnsupportedError: ${err.message.split(";")[0]}` };
    }
    throw err;
  }
  try {
    expect(!edge, `${runtime} made a TLS connection with a client certificate (via ${conn.via})?`);
    const list = await conn.client.requestJson("/api/v1/namespaces/default/configmaps");
    expect(Array.isArray(list.items), "no list");
    return `client certificate presented (via ${conn.via})`;
  } finally {
    await conn.close();
  }
}
