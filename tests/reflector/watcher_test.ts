import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  assertStoreEqualsServer,
  configMap,
  requestsAtLeast,
  requestsOf,
  waitsBetween,
  withReflector,
} from "../_harness.ts";
import { cm, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";
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
  await withReflector({}, async ({ server, reflector, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.inject({ verb: "list", fault: { kind: "status", code: 410 } });
    server.endWatches();
    const lists = await requestsAtLeast(server, "list", 3); // relist, then consistent relist
    assert.notEqual(lists[1].query.get("resourceVersion"), "");
    assert.equal(lists[2].query.get("resourceVersion"), "");
    server.create(configMap("later"));
    await converged();
    assert.equal(requestsOf(server, "list").length, 3);
  });
});

test('a relist answered 504 ResourceVersionTooLarge retries with resourceVersion="" (scenario 4)', async () => {
  await withReflector({}, async ({ server, reflector, errors, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
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
    const lists = await requestsAtLeast(server, "list", 3); // relist, then consistent relist
    assert.equal(lists[1].query.get("resourceVersion"), "99999");
    assert.equal(lists[2].query.get("resourceVersion"), "");
    assert.ok(errors.some((e) => isTooLargeResourceVersion(e.error)));
    server.create(configMap("later"));
    await converged();
    assert.equal(requestsOf(server, "list").length, 3);
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
  }, async ({ server, reflector, abort, waits, converged }) => {
    // The timing of a Retry-After wait is proven on fake time
    // (recovery_rules_test.ts); here, that the header on the wire becomes
    // the wait the reflector announces, in place of its 20 ms backoff.
    const done = reflector.run({ signal: abort.signal });
    await reflector.synced;
    const [l1, l2] = requestsOf(server, "list");
    assert.deepEqual(waitsBetween(waits, l1, l2), [1_000], "the list waited the Retry-After");
    await server.waitForWatch();
    server.inject({ verb: "watch", fault: { kind: "status", code: 429, retryAfterSeconds: 1 } });
    server.endWatches();
    const w = await requestsAtLeast(server, "watch", 3);
    assert.equal(w[1].status, 429);
    assert.deepEqual(waitsBetween(waits, w[1], w[2]), [1_000], "the watch waited the Retry-After");
    assert.equal(requestsOf(server, "list").length, 2, "no relist for a watch 429");
    server.create(configMap("z"));
    await converged();
    abort.abort();
    await done;
  });
});

test("connection refused while the server is down: back off with growing spread, rewatch from the last RV (scenario 7)", async () => {
  await withReflector({
    reflector: { reconnectBackoff: { initialMs: 40, factor: 2, capMs: 320, jitter: 1.0 } },
  }, async ({ server, reflector, errors, waits, until, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    const rv = reflector.lastSyncResourceVersion;
    const from = waits.length;
    await server.goDown(); // the open watch is cut, and every attempt is refused until it comes up
    const failures = () => errors.filter((e) => e.error instanceof KubeNetworkError).length;
    await until(() => failures() >= 5, "the dropped watch and four refused attempts");
    await server.comeUp();
    await requestsAtLeast(server, "watch", 2); // the rewatch after the outage
    // Each failure waited the reconnect backoff (40, 80, 160, 320, 320... ms,
    // each up to twice that with jitter 1.0): its schedule on fake time is
    // proven in recovery_rules_test.ts; here, that the reflector used it.
    const outage = waits.slice(from, from + failures());
    assert.ok(outage.length >= 5, `a wait after each failure: ${outage.map((w) => w.ms)}`);
    outage.forEach(({ ms }, i) => {
      const base = Math.min(320, 40 * 2 ** i);
      assert.ok(ms >= base && ms <= 2 * base, `wait ${i + 1}: ${ms} ms, base ${base} ms`);
    });
    assert.equal(requestsOf(server, "list").length, 1, "no relist");
    assert.equal(requestsOf(server, "watch")[1].query.get("resourceVersion"), rv);
    server.create(configMap("back"));
    await converged();
  });
});

test("a connection reset mid-watch is a network error, then a rewatch from the last RV without relist", async () => {
  await withReflector({}, async ({ server, store, reflector, errors, until, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    server.inject({ verb: "watch", fault: { kind: "reset", afterEvents: 2 } });
    server.endWatches();
    await server.waitForWatch({ count: 2 }); // the watch to reset
    // its first event through, then the second and the reset (mid-stream, not at its start)
    server.create(configMap("r-0"));
    await until(() => store.getByKey("fx/r-0") !== undefined, "the first event through");
    for (let i = 1; i < 4; i++) server.create(configMap(`r-${i}`));
    await until(() => errors.some((e) => e.error instanceof KubeNetworkError), "a network error");
    await converged();
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
  }, async ({ server, reflector, errors, converged }) => {
    await reflector.synced;
    await requestsAtLeast(server, "watch", 2); // the watch retried
    const statusErrors = errors.map((e) => e.error).filter((e): e is KubeStatusError =>
      e instanceof KubeStatusError
    );
    assert.deepEqual(statusErrors.map((e) => e.code), [500, 503]);
    for (const e of statusErrors) assert.ok(!/<html|<body/i.test(e.message), "HTML is not quoted");
    assert.equal(requestsOf(server, "list").length, 2);
    server.create(configMap("ok"));
    await converged();
  });
});

test("a half-open watch is cut by the idle deadline and rewatched (scenario 9)", async () => {
  await withReflector(
    { reflector: { idleTimeoutMs: 300 } },
    async ({ server, reflector, errors, until, converged }) => {
      // When the deadline fires is proven on fake time (the next test); here,
      // that it cuts a real stalled HTTP watch, which is then rewatched.
      await reflector.synced;
      await server.waitForWatch();
      server.inject({ verb: "watch", fault: { kind: "stall" } });
      server.endWatches();
      await until(
        () => errors.some((e) => e.error instanceof WatchIdleTimeoutError),
        "idle deadline",
      );
      const watches = await requestsAtLeast(server, "watch", 3); // the rewatch
      assert.equal(watches[2].query.get("resourceVersion"), reflector.lastSyncResourceVersion);
      assert.equal(requestsOf(server, "list").length, 1);
      server.create(configMap("alive"));
      await converged();
    },
  );
});

test("idleTimeoutMs cuts a quiet watch exactly that long after it opened, then a rewatch from the last version after the reconnect backoff, no relist (fake time)", async () => {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock); // its watch stays open and quiet
  lw.objects = [cm("a", "5")];
  const errors: unknown[] = [];
  const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
    clock,
    random: () => 0, // no jitter: the reconnect backoff's first wait is 800 ms
    useStreamingList: false,
    idleTimeoutMs: 300,
    onError: (e) => errors.push(e),
  });
  const ac = new AbortController();
  const done = reflector.run({ signal: ac.signal });
  const idle = () => errors.filter((e) => e instanceof WatchIdleTimeoutError).length;
  try {
    await clock.flush();
    await reflector.synced;
    assert.equal(lw.of("watch").length, 1);
    const opened = lw.of("watch")[0].at;
    await clock.advance(299);
    assert.equal(idle(), 0, "not cut before 300 ms");
    await clock.advance(1);
    assert.equal(idle(), 1, "cut at 300 ms");
    await clock.advance(799);
    assert.equal(lw.of("watch").length, 1, "not rewatched before the backoff");
    await clock.advance(1);
    assert.equal(lw.of("watch").length, 2, "rewatched after 800 ms");
    assert.equal(lw.of("watch")[1].at - opened, 300 + 800);
    assert.equal(lw.of("watch")[1].rv, "10", "from the list's version");
    assert.equal(lw.of("list").length, 1, "no relist");
  } finally {
    ac.abort();
    await done;
  }
});

test("the default idle deadline never cuts a healthy but quiet watch", async () => {
  await withReflector(
    { reflector: { minWatchTimeoutMs: 1_000, idleGraceMs: 200 } },
    async ({ server, reflector, errors }) => {
      await reflector.synced;
      await requestsAtLeast(server, "watch", 2); // the server ends the first watch at its timeout
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
  }, async ({ server, reflector, errors, waits }) => {
    // The backoff's schedule on fake time is proven in recovery_rules_test.ts;
    // here, that a real watch closed at once is a short watch that waits it.
    await reflector.synced;
    await server.waitForWatch();
    server.inject({ verb: "watch", times: 4, fault: { kind: "close", afterEvents: 0 } });
    server.endWatches(); // this watch, too, ends short: five short watches in a row
    const w = await requestsAtLeast(server, "watch", 6);
    assert.equal(errors.filter((e) => e.error instanceof ShortWatchError).length, 5);
    const spacing = w.slice(1).map((r, i) => waitsBetween(waits, w[i], r));
    assert.deepEqual(spacing, [[50], [100], [200], [400], [400]], "each waited the backoff");
    assert.equal(requestsOf(server, "list").length, 1, "no relist");
  });
});

test("events split at arbitrary bytes are each applied once (scenario 13)", async () => {
  await withReflector({ seed: 0 }, async ({ server, store, reflector, converged }) => {
    await reflector.synced;
    await server.waitForWatch();
    // tiny random chunks (1..9 bytes): splits inside UTF-8 characters and inside every line
    server.inject({
      verb: "watch",
      fault: { kind: "chunked", chunkSize: "random", seed: 7, maxChunkSize: 9 },
    });
    server.endWatches();
    await server.waitForWatch({ count: 2 }); // the rewatch, chunked
    const text = "日本語✓é".repeat(200);
    for (let i = 0; i < 20; i++) server.create(configMap(`u-${i}`, "fx", { text: `${i} ${text}` }));
    await converged();
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
    await server.waitForWatch({ count: 3 }); // the rewatch, chunked
    const big = "ü✓x".repeat(100_000);
    for (let i = 0; i < 3; i++) server.create(configMap(`big-${i}`, "fx", { big }));
    await converged();
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
    await withReflector({}, async ({ server, store, reflector, errors, until, converged }) => {
      await reflector.synced;
      await server.waitForWatch();
      server.create(configMap("before"));
      await until(() => store.getByKey("fx/before") !== undefined, "before applied");
      const good = reflector.lastSyncResourceVersion;
      server.inject({ verb: "watch", fault: { kind: "raw", data, then: "close" } });
      server.endWatches();
      const lists = await requestsAtLeast(server, "list", 2); // the relist
      assert.ok(errors.some((e) => e.error instanceof WatchDecodeError), "decode error");
      assert.equal(lists[1].query.get("resourceVersion"), good);
      server.create(configMap("after"));
      await converged();
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
    async ({ server, store, reflector, converged }) => {
      await reflector.synced;
      assert.equal(requestsOf(server, "list").length, 0, "no LIST");
      const first = requestsOf(server, "watch")[0].query;
      assert.equal(first.get("sendInitialEvents"), "true");
      assert.equal(first.get("resourceVersionMatch"), "NotOlderThan");
      assert.equal(store.list().length, 5);
      server.create(configMap("more"));
      await converged();
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
      assertStoreEqualsServer(store, server); // synced from that list
    },
  );
});

test("a streaming list whose end bookmark never comes stays unsynced and retries (scenario 21)", async () => {
  await withReflector({
    server: { streamingList: true },
    reflector: { useStreamingList: true },
    beforeStart: (s) => void s.inject({ verb: "watch", fault: { kind: "close", afterEvents: 3 } }),
  }, async ({ server, reflector, errors, until }) => {
    await until(() => errors.length >= 1, "the missing bookmark reported");
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
    await reflector.synced; // despite the stalled page
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
      assertStoreEqualsServer(store, server);
      const streamingAsks = () =>
        requestsOf(server, "watch").filter((r) => r.query.get("sendInitialEvents") === "true");
      assert.equal(streamingAsks().length, 1, "the default asks for a streaming list");
      const refusal = errors.find((e) => e.error instanceof StreamingListUnsupportedError);
      assert.ok(refusal, "the refusal is reported");
      assert.equal((refusal.error as StreamingListUnsupportedError).version, "v1.20.2");
      assert.match((refusal.error as Error).message, /v1\.20\.2/);
      assert.equal(serverFeatures(client.server).streamingList, false);
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
    async ({ server, reflector, client, converged }) => {
      await reflector.synced;
      assert.equal(requestsOf(server, "list").length, 0);
      assert.equal(serverFeatures(client.server).streamingList, true);
      server.create(configMap("later"));
      await converged();
    },
  );
});

test("watches ask for an uncompressed body (a compressed streaming list loses its end bookmark on 1.37)", async () => {
  await withReflector({}, async ({ server, reflector }) => {
    await reflector.synced;
    for (const w of await requestsAtLeast(server, "watch", 1)) {
      assert.equal(w.acceptEncoding, "identity");
    }
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
