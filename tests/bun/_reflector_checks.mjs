// A Reflector over ConfigMaps against the testkit's FakeApiServer (node:http
// served by Bun), from the npm build: sync, live changes, a 410 ERROR event
// (relist), a connection reset mid-watch (rewatch, no relist), abort. Every
// wait is woken by what it waits for (a store write, a reported error, the
// server's own notifications), never by polling.
import { check, esm, expect } from "./_check.mjs";

const {
  Indexer,
  KubeClient,
  KubeNetworkError,
  KubeStatusError,
  metaNamespaceKeyFunc,
  NAMESPACE_INDEX,
  namespaceIndexFunc,
  Reflector,
  resourceListerWatcher,
} = await import(`${esm}/mod.js`);
const { FakeApiServer } = await import(`${esm}/testkit.js`);

const configMap = (name, data = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "fx", labels: { app: "demo" } },
  data,
});
const ref = (name) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name });
const requestsOf = (server, verb) => server.requests.filter((r) => r.verb === verb);

/** Conditions re-checked at each `notify()`, each failing after `timeoutMs`. */
function changes() {
  const checks = new Set();
  return {
    notify: () => {
      for (const check of [...checks]) check();
    },
    until(cond, what, timeoutMs = 10_000) {
      if (cond()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const settle = (error) => {
          checks.delete(check);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        };
        const check = () => cond() && settle();
        const timer = setTimeout(
          () => settle(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`)),
          timeoutMs,
        );
        checks.add(check);
      });
    },
  };
}

function storeEqualsServer(store, server) {
  const key = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;
  const want = server.objects({ resource: "configmaps" }).map(key).sort();
  const have = store.list().map(key).sort();
  return want.length === have.length && want.every((k, i) => k === have[i]);
}

export async function reflectorChecks() {
  const server = await FakeApiServer.start({});
  const abort = new AbortController();
  const { notify, until } = changes();
  // the server's notifications (requests, watches, writes) re-check the conditions too
  server.waitFor(() => (notify(), false), { signal: abort.signal, timeoutMs: Infinity })
    .catch(() => {});
  let done = Promise.resolve();
  try {
    for (let i = 0; i < 20; i++) server.create(configMap(`cm-${i}`, { i: String(i) }));
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    // a store that re-checks the conditions after each write (once the reflector's apply is over)
    class NotifyingIndexer extends Indexer {
      add(o) {
        super.add(o);
        queueMicrotask(notify);
      }
      update(o) {
        super.update(o);
        queueMicrotask(notify);
      }
      delete(o) {
        super.delete(o);
        queueMicrotask(notify);
      }
      replace(items, rv) {
        super.replace(items, rv);
        queueMicrotask(notify);
      }
    }
    const store = new NotifyingIndexer(metaNamespaceKeyFunc, {
      [NAMESPACE_INDEX]: namespaceIndexFunc,
    });
    const errors = [];
    const reflector = new Reflector(lw, store, {
      name: "bun-smoke",
      expectedKind: "ConfigMap",
      backoff: { initialMs: 20, capMs: 200, jitter: 0.5 },
      shortWatchMs: 50,
      onError: (error, phase) => {
        errors.push({ error, phase });
        notify();
      },
    });
    done = reflector.run({ signal: abort.signal });

    await check(
      "reflector: lists and syncs from the FakeApiServer (node:http on Bun)",
      async () => {
        await reflector.synced;
        expect(reflector.hasSynced(), "hasSynced()");
        expect(store.list().length === 20, `store has ${store.list().length} objects, want 20`);
        expect(store.byIndex("namespace", "fx").length === 20, "namespace index");
        return `server ${server.url}`;
      },
    );

    await check("reflector: applies adds, updates and deletes from the watch", async () => {
      await server.waitForWatch();
      server.create(configMap("new"));
      server.update(configMap("cm-1", { changed: "yes" }));
      server.delete(ref("cm-2"));
      await until(() => storeEqualsServer(store, server), "store = server");
      expect(store.getByKey("fx/cm-2") === undefined, "cm-2 still in the store");
      expect(store.getByKey("fx/cm-1")?.data?.changed === "yes", "cm-1 not updated");
      expect(store.getByKey("fx/new") !== undefined, "new not added");
    });

    await check("reflector: relists after a 410 ERROR event mid-watch", async () => {
      const synced = reflector.lastSyncResourceVersion;
      server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
      server.endWatches();
      const lists = await server.waitForRequests((r) => r.verb === "list", { count: 2 });
      const rv = lists[1].query.get("resourceVersion");
      expect(rv === synced, `relist at resourceVersion ${rv}, want ${synced}`);
      server.create(configMap("after-410"));
      server.delete(ref("cm-3"));
      await until(() => storeEqualsServer(store, server), "store = server");
      expect(requestsOf(server, "list").length === 2, "more than one relist");
      expect(
        errors.some((e) => e.error instanceof KubeStatusError && e.error.code === 410),
        "no KubeStatusError 410 reported",
      );
    });

    await check("reflector: rewatches (no relist) after a connection reset mid-watch", async () => {
      const lists = requestsOf(server, "list").length;
      const watches = requestsOf(server, "watch").length;
      const opened = server.watchesOpened;
      server.inject({ verb: "watch", fault: { kind: "reset", afterEvents: 2 } });
      server.endWatches();
      await server.waitForWatch({ count: opened + 1 }); // the watch to reset, streaming
      // Its first event through, then the second and the reset: on Bun's node:http, a reset
      // in the very turn the response starts ends it cleanly instead.
      server.create(configMap("r-0"));
      await until(() => store.getByKey("fx/r-0") !== undefined, "the first event through");
      for (let i = 1; i < 4; i++) server.create(configMap(`r-${i}`));
      server.update(configMap("cm-4", { after: "reset" }));
      await until(
        () => errors.some((e) => e.error instanceof KubeNetworkError && e.phase === "watch"),
        "a KubeNetworkError in the watch phase",
      );
      await until(() => storeEqualsServer(store, server), "store = server");
      const relists = requestsOf(server, "list").length - lists;
      expect(relists === 0, `${relists} relist(s) after a reset`);
      const resumed = requestsOf(server, "watch").slice(watches + 1);
      expect(resumed.length >= 1, "no watch after the reset");
      expect(resumed.every((w) => w.query.get("resourceVersion") !== "0"), "watch restarted at 0");
      return `${store.list().length} objects, store = server`;
    });

    await check("reflector: abort makes run() resolve", async () => {
      abort.abort();
      let timer;
      const outcome = await Promise.race([
        done.then(() => "resolved", (e) => `rejected: ${e}`),
        new Promise((r) => (timer = setTimeout(() => r("still running after 2 s"), 2_000))),
      ]);
      clearTimeout(timer);
      expect(outcome === "resolved", `run() ${outcome}`);
      await server.waitFor(() => server.openWatches === 0); // the server sees the watch closed
    });
  } finally {
    abort.abort();
    await done.catch(() => {});
    await server.close();
  }
}
