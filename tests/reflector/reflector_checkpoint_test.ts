import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  Changes,
  configMap,
  FAST,
  NotifyingIndexer,
  requestsOf,
  settles,
  storeEqualsServer,
} from "../_harness.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { Reflector, type ReflectorOptions } from "../../src/reflector/reflector.ts";
import { ReflectorStateError } from "../../src/reflector/reflector_state_error.ts";
import { CheckpointResumeError } from "../../src/reflector/checkpoint_resume_error.ts";
import type { ErrorPhase } from "../../src/reflector/watcher_options.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

/** One reflector run over the server's ConfigMaps in `fx` (or `namespace`), with a checkpoint in `storage`. */
async function session(
  server: FakeApiServer,
  storage: CheckpointStorage,
  fn: (r: {
    reflector: Reflector<KubeObject>;
    store: Indexer<KubeObject>;
    errors: { error: unknown; phase: ErrorPhase }[];
    /** Resolves once store = server, checked after every store write and server change. */
    converged: () => Promise<void>;
  }) => Promise<void>,
  options: { namespace?: string; reflector?: ReflectorOptions } = {},
): Promise<{ errors: { error: unknown; phase: ErrorPhase }[] }> {
  const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: options.namespace ?? "fx",
  });
  const ac = new AbortController();
  const changes = new Changes();
  changes.follow(server, ac.signal);
  const store = new NotifyingIndexer<KubeObject>(metaNamespaceKeyFunc, {}, changes.notify);
  const errors: { error: unknown; phase: ErrorPhase }[] = [];
  const reflector = new Reflector(lw, store, {
    ...FAST,
    name: "cp",
    onError: (error, phase) => errors.push({ error, phase }),
    checkpoint: { storage, key: "configmaps" },
    ...options.reflector,
  });
  const done = reflector.run({ signal: ac.signal });
  const converged = () => changes.until(() => storeEqualsServer(store, server), "store = server");
  try {
    await fn({ reflector, store, errors, converged });
  } finally {
    ac.abort();
    await done;
  }
  return { errors };
}

test("a reflector saves its store when it stops; the next one loads it, is synced from the checkpoint at once, watches from its version without listing, and gets the changes made in between", async () => {
  const server = await FakeApiServer.start();
  try {
    for (let i = 0; i < 10; i++) server.create(configMap(`cm-${i}`));
    const storage = memoryCheckpointStorage();
    let savedRv = "";
    await session(server, storage, async ({ reflector }) => {
      await reflector.synced;
      assert.equal(reflector.syncedFrom, "server");
      savedRv = reflector.lastSyncResourceVersion;
    });
    // changes while nobody watches
    server.create(configMap("new"));
    server.update(configMap("cm-1", "fx", { changed: "yes" }));
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-2" });
    const before = server.requests.length;
    await session(server, storage, async ({ reflector, store, converged }) => {
      await reflector.synced;
      assert.equal(reflector.syncedFrom, "checkpoint");
      assert.equal(store.size, 10, "the checkpoint's objects");
      assert.equal(store.getByKey("fx/new"), undefined);
      await converged();
      assert.equal(reflector.syncedFrom, "server", "confirmed by the watch");
      assert.equal(store.getByKey("fx/cm-2"), undefined);
    });
    const after = server.requests.slice(before).filter((r) => r.resource === "configmaps");
    assert.equal(after.filter((r) => r.verb === "list").length, 0, "no list");
    const watches = after.filter((r) => r.verb === "watch");
    assert.equal(watches[0].query.get("resourceVersion"), savedRv, "watched from the checkpoint");
  } finally {
    await server.close();
  }
});

test("a checkpoint too old for the server (410 on resume) leads to one relist, reported, and the store equals the server", async () => {
  const server = await FakeApiServer.start({ historySize: 5 });
  try {
    for (let i = 0; i < 5; i++) server.create(configMap(`cm-${i}`));
    const storage = memoryCheckpointStorage();
    await session(server, storage, async ({ reflector }) => void await reflector.synced);
    for (let i = 0; i < 20; i++) server.update(configMap(`cm-${i % 5}`, "fx", { n: String(i) }));
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-4" });
    server.compact();
    const before = server.requests.length;
    const { errors } = await session(server, storage, async ({ reflector, converged }) => {
      await reflector.synced;
      await converged();
      assert.equal(reflector.syncedFrom, "server");
    });
    const lists = requestsOf(server, "list").filter((r) => server.requests.indexOf(r) >= before);
    assert.equal(lists.length, 1, "one relist");
    assert.ok(
      errors.some((e) =>
        e.phase === "checkpoint" && e.error instanceof CheckpointResumeError &&
        /could not be resumed/.test(String(e.error))
      ),
      "the relist is reported",
    );
  } finally {
    await server.close();
  }
});

test("a checkpoint of another namespace, a corrupt one and one of another server are each reported and ignored: never loaded, a plain list instead", async () => {
  const server = await FakeApiServer.start();
  try {
    for (let i = 0; i < 3; i++) server.create(configMap(`cm-${i}`));
    for (let i = 0; i < 2; i++) server.create(configMap(`other-${i}`, "other"));
    const storage = memoryCheckpointStorage();
    await session(server, storage, async ({ reflector }) => void await reflector.synced);

    // the same key, another namespace
    const foreign = await session(server, storage, async ({ reflector, store }) => {
      await reflector.synced;
      assert.equal(reflector.syncedFrom, "server");
      assert.deepEqual(store.listKeys().sort(), ["other/other-0", "other/other-1"]);
    }, {
      namespace: "other",
      reflector: { checkpoint: { storage, key: "configmaps", saveOnStop: false } },
    });
    const mismatch = foreign.errors.find((e) => e.phase === "checkpoint")?.error;
    assert.ok(mismatch instanceof CheckpointError, String(mismatch));
    assert.equal(mismatch.reason, "foreign-resource");

    // another server, same resource
    const identity = {
      server: "https://elsewhere.example:6443",
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    };
    const elsewhere = await session(server, storage, async ({ reflector }) => {
      await reflector.synced;
      assert.equal(reflector.syncedFrom, "server");
    }, { reflector: { checkpoint: { storage, key: "configmaps", identity, saveOnStop: false } } });
    assert.ok(elsewhere.errors.some((e) => e.error instanceof CheckpointError));

    // corrupt bytes under the key
    await storage.put(
      "configmaps",
      (async function* () {
        yield new TextEncoder().encode("<html>not a checkpoint</html>");
      })(),
    );
    const corrupt = await session(server, storage, async ({ reflector, store }) => {
      await reflector.synced;
      assert.equal(reflector.syncedFrom, "server");
      assert.equal(store.size, 3);
    });
    assert.ok(
      corrupt.errors.some((e) => e.phase === "checkpoint" && e.error instanceof CheckpointError),
    );
  } finally {
    await server.close();
  }
});

test("saveCheckpoint saves on request and on a timer; it refuses without the option and before the first sync; bad checkpoint options throw at construction", async () => {
  const server = await FakeApiServer.start();
  try {
    for (let i = 0; i < 3; i++) server.create(configMap(`cm-${i}`));
    const storage = memoryCheckpointStorage();
    // every save reads the head first (and writes only what changed): count the reads
    let heads = 0;
    let thirdSave!: () => void;
    const threeSaves = new Promise<void>((resolve) => (thirdSave = resolve));
    const counting: CheckpointStorage = {
      get: (k, o) => {
        if (k === "configmaps" && ++heads === 4) thirdSave(); // the load, then three saves
        return storage.get(k, o);
      },
      delete: (k, o) => storage.delete(k, o),
      put: (k, d, o) => storage.put(k, d, o),
    };
    await session(server, counting, async ({ reflector }) => {
      await reflector.synced;
      const saved = await reflector.saveCheckpoint();
      assert.equal(saved.count, 3);
      assert.equal(saved.resourceVersion, reflector.lastSyncResourceVersion);
      assert.ok(saved.bytes > 0);
      assert.equal(saved.written, "base");
      await settles(threeSaves, "saves on the timer"); // the one asked for, then two on the timer
    }, { reflector: { checkpoint: { storage: counting, key: "configmaps", saveIntervalMs: 10 } } });

    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const plain = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), FAST);
    await assert.rejects(plain.saveCheckpoint(), (err) => {
      assert.ok(err instanceof ReflectorStateError && err.reason === "no-checkpoint");
      assert.match(err.message, /no checkpoint option/);
      return true;
    });
    const unsynced = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
      ...FAST,
      checkpoint: { storage, key: "k" },
    });
    await assert.rejects(unsynced.saveCheckpoint(), (err) => {
      assert.ok(err instanceof ReflectorStateError && err.reason === "not-synced");
      assert.match(err.message, /not synced/);
      return true;
    });
    const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
    const bad = (checkpoint: unknown) => () =>
      new Reflector(lw, store, { checkpoint } as unknown as ReflectorOptions);
    assert.throws(bad({ key: "k" }), TypeError);
    assert.throws(bad({ storage, key: "" }), TypeError);
    assert.throws(bad({ storage, key: "k", saveIntervalMs: -1 }), RangeError);
    assert.throws(bad({ storage, key: "k", saveIntervalMs: Infinity }), RangeError);
    assert.throws(bad({ storage, key: "k", saveOnStop: "yes" }), TypeError);
    assert.throws(bad("storage"), TypeError);
  } finally {
    await server.close();
  }
});

test("a reflector tells onError its name", async () => {
  const server = await FakeApiServer.start();
  try {
    server.inject({ verb: "list", fault: { kind: "status", code: 500 } });
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const seen: unknown[] = [];
    const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
      ...FAST,
      name: "named",
      onError: (_e, _p, context) => seen.push(context),
    });
    const ac = new AbortController();
    const done = reflector.run({ signal: ac.signal });
    await reflector.synced;
    ac.abort();
    await done;
    assert.deepEqual(seen[0], { name: "named" });
  } finally {
    await server.close();
  }
});

test("a reflector whose first read of the cluster's UID failed (503) asks again, so its checkpoint records the cluster and is refused by another cluster behind the same URL", async () => {
  const server = await FakeApiServer.start();
  try {
    for (let i = 0; i < 3; i++) server.create(configMap(`cm-${i}`));
    const ns = server.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "kube-system" },
    });
    server.inject({ verb: "get", resource: "namespaces", fault: { kind: "status", code: 503 } });
    const storage = memoryCheckpointStorage();
    await session(server, storage, async ({ reflector }) => {
      await reflector.synced; // restored nothing: the cluster's UID was not known then
      await reflector.saveCheckpoint();
    }, { reflector: { checkpoint: { storage, key: "configmaps", saveOnStop: false } } });
    const uidReads = server.requests.filter((r) => r.path === "/api/v1/namespaces/kube-system");
    assert.deepEqual(uidReads.map((r) => r.status), [503, 200], "asked again after the 503");
    const identity = {
      server: server.url,
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    };
    const saved = await loadCheckpoint(storage, "configmaps", identity);
    assert.equal(saved?.identity.cluster, ns.metadata.uid, "the checkpoint records the cluster");
    await assert.rejects(
      loadCheckpoint(storage, "configmaps", { ...identity, cluster: "another-cluster" }),
      (err) => err instanceof CheckpointError && err.reason === "foreign-cluster",
    );
  } finally {
    await server.close();
  }
});

test("a reflector's saves write only what changed since the last one: a snapshot first, then the changes (a log piece), nothing without a change; the next reflector loads the same objects", async () => {
  const server = await FakeApiServer.start();
  try {
    for (let i = 0; i < 50; i++) server.create(configMap(`cm-${i}`));
    const storage = memoryCheckpointStorage();
    await session(server, storage, async ({ reflector, converged }) => {
      await reflector.synced;
      const first = await reflector.saveCheckpoint();
      assert.equal(first.written, "base");
      assert.equal(first.count, 50);
      const none = await reflector.saveCheckpoint();
      assert.equal(none.written, "none");
      assert.equal(none.bytes, 0);
      server.update(configMap("cm-3", "fx", { v: "2" }));
      server.delete(configMap("cm-4"));
      server.create(configMap("cm-new"));
      await converged();
      const log = await reflector.saveCheckpoint();
      assert.equal(log.written, "log");
      assert.equal(log.count, 50);
      assert.ok(
        log.bytes < first.bytes / 4,
        `${log.bytes} bytes for 3 changes, ${first.bytes} for all`,
      );
      assert.equal((await reflector.saveCheckpoint()).written, "none");
    }, { reflector: { checkpoint: { storage, key: "configmaps", saveOnStop: false } } });
    const loaded = await loadCheckpoint(storage, "configmaps", {
      server: server.url,
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    });
    assert.equal(loaded?.items.length, 50);
    const names = new Set(loaded!.items.map((o) => o.metadata.name));
    assert.ok(names.has("cm-new") && !names.has("cm-4"));
    assert.deepEqual(loaded!.items.find((o) => o.metadata.name === "cm-3")?.data, { v: "2" });
  } finally {
    await server.close();
  }
});
