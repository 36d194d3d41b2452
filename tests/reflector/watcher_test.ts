import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  configMap,
  eventually,
  requestsOf,
  storeEqualsServer,
  withReflector,
} from "../_harness.ts";
import {
  KubeNetworkError,
  ListTimeoutError,
  ShortWatchError,
  StreamingListUnsupportedError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../../src/api/errors.ts";
import type { KubeList, KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import type { ListerWatcher } from "../../src/transport/lister_watcher.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isTooLargeResourceVersion } from "../../src/api/predicates.ts";
import { watcher, type WatcherEvent } from "../../src/reflector/watcher.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { serverFeatures } from "../../src/transport/server_features.ts";

test('a relist answered 410 Expired retries at once with resourceVersion="" (scenario 4)', async () => {
  await withReflector({}, async ({ server, store, reflector }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.inject({ verb: "list", fault: { kind: "status", code: 410 } });
    server.endWatches();
    await eventually(
      () => requestsOf(server, "list").length === 3,
      "relist, then consistent relist",
    );
    const lists = requestsOf(server, "list");
    assert.notEqual(lists[1].query.get("resourceVersion"), "");
    assert.equal(lists[2].query.get("resourceVersion"), "");
    server.create(configMap("later"));
    await eventually(() => storeEqualsServer(store, server), "store = server");
  });
});

test('a relist answered 504 ResourceVersionTooLarge retries with resourceVersion="" (scenario 4)', async () => {
  await withReflector({}, async ({ server, store, reflector, errors }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    // As when the client last talked to a more up-to-date API server: a
    // bookmark from the future, then a 410, so the relist asks for a version
    // this server has not reached and gets the real 504.
    const future = JSON.stringify({
      type: "BOOKMARK",
      object: { kind: "ConfigMap", apiVersion: "v1", metadata: { resourceVersion: "99999" } },
    });
    server.inject({ verb: "watch", fault: { kind: "raw", data: future + "\n", then: "close" } });
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.endWatches();
    await eventually(
      () => requestsOf(server, "list").length === 3,
      "relist, then consistent relist",
    );
    const lists = requestsOf(server, "list");
    assert.equal(lists[1].query.get("resourceVersion"), "99999");
    assert.equal(lists[2].query.get("resourceVersion"), "");
    assert.ok(errors.some((e) => isTooLargeResourceVersion(e.error)));
    server.create(configMap("later"));
    await eventually(() => storeEqualsServer(store, server), "store = server");
    assert.equal(
      reflector.lastSyncResourceVersion,
      server.resourceVersion,
      "back on the server's timeline",
    );
  });
});

test("429 with Retry-After is honoured on list and on watch, and a watch 429 does not relist (scenario 6)", async () => {
  await withReflector({
    start: false,
    beforeStart: (s) => {
      s.inject({ verb: "list", fault: { kind: "status", code: 429, retryAfterSeconds: 1 } });
    },
  }, async ({ server, reflector, abort, store }) => {
    const done = reflector.run({ signal: abort.signal });
    await reflector.synced;
    const [l1, l2] = requestsOf(server, "list");
    assert.ok(l2.at - l1.at >= 950, `list retried after ${l2.at - l1.at} ms`);
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    server.inject({ verb: "watch", fault: { kind: "status", code: 429, retryAfterSeconds: 1 } });
    server.endWatches();
    await eventually(() => requestsOf(server, "watch").length >= 3, "watch retried", 5_000);
    const w = requestsOf(server, "watch");
    assert.ok(w[2].at - w[1].at >= 950, `watch retried after ${w[2].at - w[1].at} ms`);
    assert.equal(requestsOf(server, "list").length, 2, "no relist for a watch 429");
    server.create(configMap("z"));
    await eventually(() => storeEqualsServer(store, server), "store = server");
    abort.abort();
    await done;
  });
});

test("connection refused while the server is down: back off with growing spread, rewatch from the last RV (scenario 7)", async () => {
  await withReflector({
    reflector: { reconnectBackoff: { initialMs: 40, factor: 2, capMs: 320, jitter: 1.0 } },
  }, async ({ server, store, reflector, errors }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    const rv = reflector.lastSyncResourceVersion;
    await server.refuseConnections(1_200);
    await eventually(
      () => requestsOf(server, "watch").length >= 2,
      "rewatch after the outage",
      8_000,
    );
    const refused = errors.filter((e) => e.error instanceof KubeNetworkError);
    assert.ok(refused.length >= 3, `${refused.length} refused attempts`);
    const gaps = refused.slice(1).map((e, i) => e.at - refused[i].at);
    assert.ok(gaps.every((g) => g >= 35), `every gap >= the initial delay: ${gaps}`);
    assert.ok(gaps.at(-1)! > gaps[0], `delays grow: ${gaps}`);
    assert.ok(refused.length < 20, "no hot loop");
    assert.equal(requestsOf(server, "list").length, 1, "no relist");
    assert.equal(requestsOf(server, "watch")[1].query.get("resourceVersion"), rv);
    server.create(configMap("back"));
    await eventually(() => storeEqualsServer(store, server), "store = server");
  });
});

test("a connection reset mid-watch is a network error, then a rewatch from the last RV without relist", async () => {
  await withReflector({}, async ({ server, store, reflector, errors }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    server.inject({ verb: "watch", fault: { kind: "reset", afterEvents: 2 } });
    server.endWatches();
    await eventually(() => requestsOf(server, "watch").length >= 2, "the watch to reset");
    for (let i = 0; i < 4; i++) server.create(configMap(`r-${i}`));
    await eventually(
      () => errors.some((e) => e.error instanceof KubeNetworkError),
      "a network error",
    );
    await eventually(() => storeEqualsServer(store, server), "store = server");
    assert.equal(requestsOf(server, "list").length, 1, "no relist");
    const watches = requestsOf(server, "watch");
    assert.ok(watches.length >= 3);
    for (const w of watches.slice(2)) {
      assert.notEqual(w.query.get("resourceVersion"), "0", "resumed, not restarted");
    }
  });
});

test("500 and 503 with an HTML body become typed errors, then a retry (scenario 8)", async () => {
  await withReflector({
    beforeStart: (s) => {
      s.inject({ verb: "list", fault: { kind: "status", code: 500, body: "html" } });
      s.inject({ verb: "watch", fault: { kind: "status", code: 503, body: "html" } });
    },
  }, async ({ server, store, reflector, errors }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 2, "watch retried");
    const statusErrors = errors.map((e) => e.error).filter((e): e is KubeStatusError =>
      e instanceof KubeStatusError
    );
    assert.deepEqual(statusErrors.map((e) => e.code), [500, 503]);
    for (const e of statusErrors) assert.ok(!/<html|<body/i.test(e.message), "HTML is not quoted");
    assert.equal(requestsOf(server, "list").length, 2);
    server.create(configMap("ok"));
    await eventually(() => storeEqualsServer(store, server), "store = server");
  });
});

test("a half-open watch is cut by the idle deadline and rewatched (scenario 9)", async () => {
  await withReflector(
    { reflector: { idleTimeoutMs: 300 } },
    async ({ server, store, reflector, errors }) => {
      await reflector.synced;
      await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
      server.inject({ verb: "watch", fault: { kind: "stall" } });
      server.endWatches();
      const t0 = Date.now();
      await eventually(
        () => errors.some((e) => e.error instanceof WatchIdleTimeoutError),
        "idle deadline",
        3_000,
      );
      const detected = Date.now() - t0;
      assert.ok(detected < 1_500, `detected after ${detected} ms (bound 300 ms + backoff)`);
      await eventually(() => requestsOf(server, "watch").length >= 3, "rewatch");
      assert.equal(requestsOf(server, "list").length, 1);
      server.create(configMap("alive"));
      await eventually(() => storeEqualsServer(store, server), "store = server");
    },
  );
});

test("the default idle deadline never cuts a healthy but quiet watch", async () => {
  await withReflector(
    { reflector: { minWatchTimeoutMs: 1_000, idleGraceMs: 200 } },
    async ({ server, reflector, errors }) => {
      await reflector.synced;
      await eventually(
        () => requestsOf(server, "watch").length >= 2,
        "the server ends the first watch at its timeout",
        4_000,
      );
      assert.ok(
        !errors.some((e) => e.error instanceof WatchIdleTimeoutError),
        "no idle timeout on a healthy watch",
      );
    },
  );
});

test("repeated short watches are errors with backoff, not a hot loop (scenario 10)", async () => {
  await withReflector({
    reflector: { shortWatchMs: 1_000, backoff: { initialMs: 50, capMs: 400, jitter: 0 } },
  }, async ({ server, reflector, errors }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    server.inject({ verb: "watch", times: 4, fault: { kind: "close", afterEvents: 0 } });
    server.endWatches();
    await eventually(
      () => errors.filter((e) => e.error instanceof ShortWatchError).length >= 4,
      "four short watches",
      5_000,
    );
    const w = requestsOf(server, "watch").slice(1);
    const gaps = w.slice(1).map((r, i) => r.at - w[i].at);
    assert.ok(gaps.length >= 2 && gaps.every((g) => g >= 45), `watches spaced by backoff: ${gaps}`);
    assert.ok(gaps[1] > gaps[0], `backoff grows: ${gaps}`);
  });
});

test("events split at arbitrary bytes are each applied once (scenario 13)", async () => {
  await withReflector({ seed: 0 }, async ({ server, store, reflector }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    // tiny random chunks (1..9 bytes): splits inside UTF-8 characters and inside every line
    server.inject({
      verb: "watch",
      fault: { kind: "chunked", chunkSize: "random", seed: 7, maxChunkSize: 9 },
    });
    server.endWatches();
    await eventually(() => requestsOf(server, "watch").length >= 2, "rewatch");
    const text = "日本語✓é".repeat(200);
    for (let i = 0; i < 20; i++) server.create(configMap(`u-${i}`, "fx", { text: `${i} ${text}` }));
    await eventually(() => storeEqualsServer(store, server), "store = server", 10_000);
    for (let i = 0; i < 20; i++) {
      assert.equal(
        (store.getByKey(`fx/u-${i}`) as unknown as { data: Record<string, string> }).data.text,
        `${i} ${text}`,
      );
    }
    // large objects (~600 KB lines) in random chunks up to 4 KiB: long runs without a newline
    server.inject({
      verb: "watch",
      fault: { kind: "chunked", chunkSize: "random", seed: 11, maxChunkSize: 4096 },
    });
    server.endWatches();
    await eventually(() => requestsOf(server, "watch").length >= 3, "rewatch");
    const big = "ü✓x".repeat(100_000);
    for (let i = 0; i < 3; i++) server.create(configMap(`big-${i}`, "fx", { big }));
    await eventually(() => storeEqualsServer(store, server), "store = server", 10_000);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (store.getByKey(`fx/big-${i}`) as unknown as { data: Record<string, string> }).data.big,
        big,
      );
    }
    assert.equal(
      requestsOf(server, "list").length,
      1,
      "every event applied from the watch, no relist",
    );
  });
});

test("a malformed line is a typed error, then a relist from the last good RV after the backoff (scenario 14, client-go's rule)", async () => {
  for (
    const data of [
      '{"type":"ADDED","object":{"metad',
      "<html><body>502 Bad Gateway</body></html>\n",
      "garbage\n",
    ]
  ) {
    await withReflector({}, async ({ server, store, reflector, errors }) => {
      await reflector.synced;
      await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
      server.create(configMap("before"));
      await eventually(() => store.getByKey("fx/before") !== undefined, "before applied");
      const good = reflector.lastSyncResourceVersion;
      server.inject({ verb: "watch", fault: { kind: "raw", data, then: "close" } });
      server.endWatches();
      await eventually(
        () => errors.some((e) => e.error instanceof WatchDecodeError),
        "decode error",
      );
      await eventually(() => requestsOf(server, "list").length >= 2, "relist");
      assert.equal(requestsOf(server, "list")[1].query.get("resourceVersion"), good);
      server.create(configMap("after"));
      await eventually(() => storeEqualsServer(store, server), "store = server");
    });
  }
});

test("watcher yields a LIST snapshot then typed changes, with no store", async () => {
  await withReflector({ start: false, seed: 2 }, async ({ server, client }) => {
    const lw = resourceListerWatcher(client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    });
    const ac = new AbortController();
    const seen: WatcherEvent[] = [];
    const run = (async () => {
      for await (const ev of watcher(lw, { signal: ac.signal, onError: () => {} })) {
        seen.push(ev);
        if (ev.type === "LIST") server.create(configMap("n1"));
        if (ev.type === "ADDED") ac.abort();
      }
    })();
    await run; // the one abort rule: the loop ends quietly
    assert.ok(ac.signal.aborted);
    assert.equal(seen[0].type, "LIST");
    assert.equal(seen[0].type === "LIST" && seen[0].items.length, 2);
    assert.equal(seen[1].type, "ADDED");
  });
});

test("a streaming list syncs from initial events and the end bookmark, with no LIST (scenario 21)", async () => {
  await withReflector(
    { server: { streamingList: true }, reflector: { useStreamingList: true } },
    async ({ server, store, reflector }) => {
      await reflector.synced;
      assert.equal(requestsOf(server, "list").length, 0, "no LIST");
      const first = requestsOf(server, "watch")[0].query;
      assert.equal(first.get("sendInitialEvents"), "true");
      assert.equal(first.get("resourceVersionMatch"), "NotOlderThan");
      assert.equal(store.list().length, 5);
      server.create(configMap("more"));
      await eventually(() => storeEqualsServer(store, server), "store = server");
    },
  );
});

test("a server without streaming lists (422) makes the reflector fall back to LIST (scenario 21)", async () => {
  await withReflector(
    { reflector: { useStreamingList: true } },
    async ({ server, store, reflector, errors }) => {
      await reflector.synced;
      const refusal = errors[0].error as StreamingListUnsupportedError;
      assert.ok(refusal instanceof StreamingListUnsupportedError);
      assert.equal((refusal.cause as KubeStatusError).code, 422);
      assert.equal(requestsOf(server, "list").length, 1);
      await eventually(() => storeEqualsServer(store, server), "store = server");
    },
  );
});

test("a streaming list whose end bookmark never comes stays unsynced and retries (scenario 21)", async () => {
  await withReflector({
    server: { streamingList: true },
    reflector: { useStreamingList: true },
    beforeStart: (s) => void s.inject({ verb: "watch", fault: { kind: "close", afterEvents: 3 } }),
  }, async ({ server, reflector, errors }) => {
    await eventually(() => errors.length >= 1, "the missing bookmark reported");
    assert.equal(reflector.hasSynced(), false);
    await reflector.synced;
    assert.ok(requestsOf(server, "watch").length >= 2);
  });
});

test("listTimeoutMs bounds each list request: a stalled page times out and the list is retried", async () => {
  await withReflector({
    server: { paginateResourceVersionZero: true },
    seed: 12,
    reflector: { pageSize: 5, listTimeoutMs: 300 },
    beforeStart: (s) => void s.inject({ verb: "list", fault: { kind: "stall" } }),
  }, async ({ server, store, reflector, errors }) => {
    await eventually(() => reflector.hasSynced(), "synced despite the stalled page");
    assert.ok(
      errors.some((e) => e.error instanceof ListTimeoutError),
      "the stalled request timed out",
    );
    assert.equal(store.list().length, 12);
    assert.ok(requestsOf(server, "list").length >= 4, "retried, page by page");
  });
});

test("listTimeoutMs does not bound a whole paginated list whose pages are each fast", async () => {
  let requests = 0;
  const lw: ListerWatcher = {
    list(o): Promise<KubeList> {
      requests++;
      const page = o.continue ? Number(o.continue) : 0;
      return new Promise((res) =>
        setTimeout(() =>
          res({
            metadata: { resourceVersion: "7", continue: page < 7 ? String(page + 1) : undefined },
            items: [{ metadata: { name: `o${page}`, namespace: "d", resourceVersion: "7" } }],
          }), 25)
      );
    },
    // deno-lint-ignore require-yield
    async *watch(o) {
      await new Promise((_, reject) =>
        o.signal?.addEventListener("abort", () => reject(o.signal!.reason), { once: true })
      );
    },
  };
  const store = new Indexer<KubeObject>(metaNamespaceKeyFunc);
  const errors: unknown[] = [];
  const reflector = new Reflector(lw, store, {
    listTimeoutMs: 100,
    useStreamingList: false,
    onError: (e) => errors.push(e),
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  await reflector.waitForSync({ signal: AbortSignal.timeout(5_000) });
  ac.abort();
  await done;
  assert.equal(
    store.list().length,
    8,
    "8 pages of 25 ms each, 200 ms in all, with a 100 ms per-request deadline",
  );
  assert.equal(requests, 8);
  assert.deepEqual(errors, []);
});

test("time a consumer spends on an event does not count towards the idle deadline", async () => {
  await withReflector({ start: false, seed: 3 }, async ({ server, client }) => {
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    const ac = new AbortController();
    const errors: unknown[] = [];
    let changes = 0;
    const run = (async () => {
      for await (
        const ev of watcher(lw, {
          signal: ac.signal,
          useStreamingList: false,
          idleTimeoutMs: 100,
          onError: (e) => errors.push(e),
        })
      ) {
        if (ev.type === "LIST") server.create(configMap("slow"));
        if (ev.type === "ADDED") {
          changes++;
          await new Promise((r) => setTimeout(r, 300)); // a slow consumer, 3× the idle deadline
          server.create(configMap(`next-${changes}`));
          if (changes === 3) ac.abort();
        }
      }
    })();
    await run; // ends quietly on abort
    assert.equal(changes, 3);
    assert.ok(
      !errors.some((e) => e instanceof WatchIdleTimeoutError),
      "no idle timeout while the consumer worked",
    );
    assert.equal(requestsOf(server, "watch").length, 1, "one watch throughout");
  });
});

test("streaming lists are the default; a server that refuses them (422) is asked once per process, and the refusal names its version", async () => {
  await withReflector(
    { reflector: { useStreamingList: undefined } },
    async ({ server, client, store, reflector, errors }) => {
      await reflector.synced;
      const streamingAsks = () =>
        requestsOf(server, "watch").filter((r) => r.query.get("sendInitialEvents") === "true");
      assert.equal(streamingAsks().length, 1, "the default asks for a streaming list");
      const refusal = errors.find((e) => e.error instanceof StreamingListUnsupportedError);
      assert.ok(refusal, "the refusal is reported");
      assert.equal((refusal.error as StreamingListUnsupportedError).version, "v1.20.2");
      assert.match((refusal.error as Error).message, /v1\.20\.2/);
      assert.equal(serverFeatures(client.server).streamingList, false);
      await eventually(() => storeEqualsServer(store, server), "store = server");
      // A second reflector of the same server does not ask again.
      const second = new Reflector(
        resourceListerWatcher(client, {
          apiVersion: "v1",
          resource: "configmaps",
          namespace: "fx",
        }),
        new Indexer(metaNamespaceKeyFunc),
        { onError: () => {} },
      );
      const ac = new AbortController();
      const done = second.run({ signal: ac.signal });
      await second.synced;
      ac.abort();
      await done;
      assert.equal(streamingAsks().length, 1, "remembered for this server");
    },
  );
});

test("streaming lists by default against a server that supports them: no LIST at all", async () => {
  await withReflector(
    { server: { streamingList: true }, reflector: { useStreamingList: undefined } },
    async ({ server, store, reflector, client }) => {
      await reflector.synced;
      assert.equal(requestsOf(server, "list").length, 0);
      assert.equal(serverFeatures(client.server).streamingList, true);
      server.create(configMap("later"));
      await eventually(() => storeEqualsServer(store, server), "store = server");
    },
  );
});

test("watches ask for an uncompressed body (a compressed streaming list loses its end bookmark on 1.37)", async () => {
  await withReflector({}, async ({ server, reflector }) => {
    await reflector.synced;
    await eventually(() => requestsOf(server, "watch").length >= 1, "a watch");
    for (const w of requestsOf(server, "watch")) assert.equal(w.acceptEncoding, "identity");
  });
});

test("reflectors started together against a server without streaming lists report its refusal once, not once each", async () => {
  await withReflector(
    { reflector: { useStreamingList: undefined } },
    async ({ server, client, reflector, errors }) => {
      // Three more reflectors of the same server, started in the same tick
      // as the first: all four ask for a streaming list before any refusal.
      const more = ["fx", "fy", "fz"].map((namespace) => {
        const seen: unknown[] = [];
        const r = new Reflector(
          resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps", namespace }),
          new Indexer(metaNamespaceKeyFunc),
          { onError: (e) => seen.push(e) },
        );
        return { r, seen };
      });
      const ac = new AbortController();
      const runs = more.map(({ r }) => r.run({ signal: ac.signal }));
      await reflector.synced;
      await Promise.all(more.map(({ r }) => r.synced));
      ac.abort();
      await Promise.all(runs);
      const asked = requestsOf(server, "watch").filter((r) =>
        r.query.get("sendInitialEvents") === "true"
      );
      assert.ok(asked.length >= 2, `several streaming lists were refused (${asked.length})`);
      const refusals = [...errors.map((e) => e.error), ...more.flatMap(({ seen }) => seen)]
        .filter((e) => e instanceof StreamingListUnsupportedError);
      assert.equal(refusals.length, 1, "one report for the server");
    },
  );
});
