/**
 * A hostile API server: garbage and lies on real HTTP, over and over. For
 * each, the reflector reports a typed error, keeps running, paces its
 * requests by the backoff (no hot loop), never lets the bad answer touch
 * its store, and holds the server's objects once the server heals.
 *
 * Pacing is checked on what the reflector announces, not on the wall clock:
 * before each retry it must have announced a backoff wait (observer state
 * "waiting") of at least the schedule's delay. That those waits last what
 * they say is proven on fake time in recovery_rules_test.ts.
 *
 * @module
 */
import { BAD_LIST_BODIES, isStatusError, STATUS_FAILURE } from "./_bad_list_bodies.ts";
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  Changes,
  configMap,
  NotifyingIndexer,
  notifyingObserver,
  storeEqualsServer,
  type Wait,
  waitsBetween,
} from "../_harness.ts";
import {
  ShortWatchError,
  WatchDecodeError,
  type WatchDecodeProblem,
} from "../../src/api/errors.ts";
import type { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { Reflector, type ReflectorOptions } from "../../src/reflector/reflector.ts";
import type { ErrorPhase, RelistReason } from "../../src/reflector/watcher_options.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import {
  FakeApiServer,
  type Fault,
  type FaultVerb,
  type RecordedRequest,
  type StatusFault,
} from "../../testkit.ts";

/** The backoff of both schedules: 20, 40, 80, 100, 100... ms, no jitter. */
const BACKOFF = { initialMs: 20, factor: 2, capMs: 100, jitter: 0 } as const;

const HOSTILE: ReflectorOptions = {
  useStreamingList: false, // the fake server answers streaming lists 422, as 1.20 does
  expectedKind: "ConfigMap",
  backoff: BACKOFF,
  reconnectBackoff: BACKOFF,
  shortWatchMs: 50,
};

/** An indexer that counts its `replace` calls (each one a list the reflector accepted). */
class RecordingIndexer extends NotifyingIndexer<KubeObject> {
  readonly replaced: number[] = [];
  override replace(items: KubeObject[], resourceVersion: string): void {
    this.replaced.push(items.length);
    super.replace(items, resourceVersion);
  }
}

interface Hostile {
  server: FakeApiServer;
  store: RecordingIndexer;
  reflector: Reflector<KubeObject>;
  errors: Array<{ error: unknown; phase: ErrorPhase }>;
  relists: RelistReason[];
  /** Every backoff wait the reflector announced. */
  waits: Wait[];
  /** True once `run()` has settled (it must not, before the abort). */
  settled: () => boolean;
  /** Resolves once `cond()` holds, checked after every store write, error, observer call and server change. */
  until(cond: () => boolean, what: string): Promise<void>;
}

/**
 * Starts a fake server seeded with `seed` ConfigMaps and a reflector over
 * them (a ListerWatcher with `maxEventLength`), runs `fn`, then stops both
 * whatever happens.
 */
async function withHostileServer(
  options: {
    reflector?: ReflectorOptions;
    seed?: number;
    maxEventLength?: number;
    beforeStart?: (server: FakeApiServer) => void;
  },
  fn: (h: Hostile) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start();
  const abort = new AbortController();
  const changes = new Changes();
  changes.follow(server, abort.signal);
  let done: Promise<void> = Promise.resolve();
  try {
    for (let i = 0; i < (options.seed ?? 3); i++) {
      server.create(configMap(`cm-${i}`, "fx", { i: String(i) }));
    }
    options.beforeStart?.(server);
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
      maxEventLength: options.maxEventLength,
    });
    const store = new RecordingIndexer(metaNamespaceKeyFunc, {}, changes.notify);
    const errors: Hostile["errors"] = [];
    const relists: RelistReason[] = [];
    const waits: Wait[] = [];
    const reflector = new Reflector(lw, store, {
      name: "hostile",
      ...HOSTILE,
      onError: (error, phase) => {
        errors.push({ error, phase });
        changes.notify();
      },
      ...options.reflector,
      observer: notifyingObserver(changes.notify, waits, server, {
        relist: (reason) => relists.push(reason),
      }),
    });
    let settled = false;
    done = reflector.run({ signal: abort.signal }).finally(() => (settled = true));
    const until = (cond: () => boolean, what: string) => changes.until(cond, what);
    await fn({ server, store, reflector, errors, relists, waits, settled: () => settled, until });
  } finally {
    abort.abort();
    await done;
    await server.close();
  }
}

/** The requests logged after `since` (a `requestCount`), of the given verbs. */
function requestsSince(
  server: FakeApiServer,
  since: number,
  verbs: readonly string[] = ["list", "watch"],
): RecordedRequest[] {
  return server.requests.filter((r) => r.seq > since && verbs.includes(r.verb));
}

/** The backoff's delays from its first one: 20, 40, 80, 100, 100... */
function schedule(n: number): number[] {
  const delays: number[] = [];
  for (let d: number = BACKOFF.initialMs; delays.length < n; d = Math.min(BACKOFF.capMs, d * 2)) {
    delays.push(d);
  }
  return delays;
}

/**
 * Asserts that `requests` (the failing ones and what follows each) are
 * paced by the backoff: before each request of `verb` but the first, the
 * reflector announced waits adding up to at least the backoff's n-th delay
 * since the one before; and each attempt (from one request of `verb` to
 * the next) made at most `perAttempt` requests: no hot loop.
 */
function assertPaced(
  h: Hostile,
  requests: RecordedRequest[],
  verb: string,
  perAttempt: number,
  what: string,
): void {
  const attempts = requests.filter((r) => r.verb === verb);
  assert.ok(attempts.length >= 3, `${what}: ${attempts.length} ${verb} requests, not retried`);
  const minimum = schedule(attempts.length - 1);
  attempts.slice(1).forEach((r, i) => {
    const waited = waitsBetween(h.waits, attempts[i], r);
    const total = waited.reduce((a, b) => a + b, 0);
    assert.ok(
      total >= minimum[i],
      `${what}: before ${verb} ${i + 2} the reflector waited [${waited}] ms, under the ` +
        `backoff's ${minimum[i]} ms`,
    );
  });
  attempts.forEach((r, i) => {
    const next = attempts[i + 1]?.seq ?? Infinity;
    const made = requests.filter((q) => q.seq >= r.seq && q.seq < next).length;
    assert.ok(made <= perAttempt, `${what}: attempt ${i + 1} made ${made} requests: a hot loop`);
  });
}

/** The errors reported so far that satisfy `pred`. */
function errorsWhere(h: Hostile, pred: (error: unknown) => boolean): unknown[] {
  return h.errors.filter((e) => pred(e.error)).map((e) => e.error);
}

function isDecodeError(problem: WatchDecodeProblem): (e: unknown) => boolean {
  return (e) => e instanceof WatchDecodeError && e.problem === problem;
}

/** A ConfigMap watch event of about `bytes` bytes, valid JSON. */
function bigEvent(bytes: number): string {
  const object = { ...configMap("huge"), data: { blob: "x".repeat(bytes) } };
  object.metadata = { ...object.metadata, resourceVersion: "999" };
  return JSON.stringify({ type: "ADDED", object });
}

// ---------------------------------------------------------------------------
// Poison watch lines, sent on every watch from one resourceVersion
// ---------------------------------------------------------------------------

const POISON: Array<{ name: string; line: string; problem: WatchDecodeProblem }> = [
  { name: "a line that is not JSON", line: "this is not json {]\n", problem: "syntax" },
  {
    name: "an ADDED event whose object has no metadata",
    line: '{"type":"ADDED","object":{"kind":"ConfigMap"}}\n',
    problem: "shape",
  },
  {
    name: "an event line longer than maxEventLength",
    line: `${bigEvent(6_000)}\n`,
    problem: "line-too-long",
  },
];

for (const { name, line, problem } of POISON) {
  test(`${name}, on every watch from one version: relist after the backoff, then watch from the list's newer version (scenario 14)`, async () => {
    await withHostileServer({ maxEventLength: 4_096 }, async (h) => {
      const { server, store, reflector } = h;
      await reflector.synced;
      await server.waitForWatch();
      const rv = reflector.lastSyncResourceVersion;
      const since = server.requestCount;
      const poison = server.inject({
        verb: "watch",
        resourceVersion: rv,
        times: Infinity,
        fault: { kind: "raw", data: line, then: "close" },
      });
      server.endWatches(); // the rewatch is from `rv`: poisoned
      await h.until(
        () => errorsWhere(h, isDecodeError(problem)).length >= 4,
        `WatchDecodeError (${problem}) reported for each`,
      );
      assert.ok(poison.fired >= 4, "the poisoned watch retried");
      assert.ok(
        h.errors.every((e) =>
          e.phase !== "watch" || e.error instanceof WatchDecodeError ||
          e.error instanceof ShortWatchError // the watch endWatches() cut
        ),
      );
      const requests = requestsSince(server, since);
      assertPaced(h, requests, "watch", 2, name);
      const relists = requests.filter((r) => r.verb === "list");
      assert.ok(relists.length >= 3, "each poisoned watch is followed by a relist");
      for (const r of relists) {
        assert.equal(r.query.get("resourceVersion"), rv, "relists from the last applied version");
      }
      assert.ok(h.relists.filter((r) => r === "watch-failed").length >= 3);
      assert.equal(h.settled(), false, "run() goes on");
      assert.ok(storeEqualsServer(store, server), "store untouched by the poison");

      // The server moves on while the poison is still served from `rv`: the
      // next relist returns the newer version, whose watch is clean.
      const listsBefore = server.requests.filter((r) => r.verb === "list").length;
      server.create(configMap("after-poison"));
      const newer = server.resourceVersion;
      await server.waitForRequests((r) =>
        r.verb === "watch" && r.query.get("resourceVersion") === newer
      );
      await server.waitFor(() => server.openWatches === 1); // the clean watch stays open
      await h.until(() => storeEqualsServer(store, server), "store = server after the relist");
      const listsAfterRelist = server.requests.filter((r) => r.verb === "list").length;
      assert.ok(listsAfterRelist > listsBefore);
      server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-0" });
      server.create(configMap("later"));
      await h.until(() => storeEqualsServer(store, server), "the DELETE applied from the watch");
      assert.equal(store.getByKey("fx/cm-0"), undefined);
      assert.equal(
        server.requests.filter((r) => r.verb === "list").length,
        listsAfterRelist,
        "the DELETE came by the watch, not by another relist",
      );
      assert.equal(poison.remaining, Infinity, "the poison is still served from the old version");
      assert.equal(reflector.lastSyncResourceVersion, server.resourceVersion);
      assert.equal(h.settled(), false);
    });
  });
}

// ---------------------------------------------------------------------------
// Faults on every watch
// ---------------------------------------------------------------------------

/**
 * Every watch gets `fault` until the test heals the server: typed errors,
 * a relist from the last applied version after each (paced by the backoff),
 * deletes still seen through those relists, store = server once healed.
 */
async function everyWatchRelists(
  fault: Fault,
  isExpected: (e: unknown) => boolean,
  what: string,
): Promise<void> {
  await withHostileServer({}, async (h) => {
    const { server, store, reflector } = h;
    await reflector.synced;
    await server.waitForWatch();
    const since = server.requestCount;
    const rule = server.inject({ verb: "watch", times: Infinity, fault });
    server.endWatches();
    await h.until(() => errorsWhere(h, isExpected).length >= 4, `${what} reported, again`);
    const requests = requestsSince(server, since);
    assertPaced(h, requests, "watch", 2, what);
    for (const r of requests.filter((r) => r.verb === "list")) {
      assert.equal(r.query.get("resourceVersion"), reflector.lastSyncResourceVersion);
    }
    assert.ok(h.relists.filter((r) => r === "watch-failed").length >= 3, "relists after each");
    assert.equal(h.settled(), false, "run() goes on");
    assert.equal(reflector.hasSynced(), true);

    // Not frozen: a delete made while every watch fails arrives by a relist.
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-1" });
    await h.until(() => store.getByKey("fx/cm-1") === undefined, "the delete seen by a relist");
    assert.ok(storeEqualsServer(store, server));

    rule.cancel();
    await server.waitFor(() => server.openWatches === 1); // a healthy watch once healed
    server.create(configMap("healed"));
    await h.until(() => storeEqualsServer(store, server), "store = server");
    assert.equal(h.settled(), false);
  });
}

test("an ERROR event with a 500 Status on every watch: KubeStatusError, relist from the last applied version after the backoff, store = server once healed", async () => {
  await everyWatchRelists(
    { kind: "error-event", code: 500 },
    isStatusError(500, /InternalError/),
    "ERROR 500",
  );
});

test("a watch body of NUL bytes on every watch: WatchDecodeError, relist after the backoff, store = server once healed", async () => {
  await everyWatchRelists(
    { kind: "raw", data: new Uint8Array(4_096), then: "close" },
    (e) => e instanceof WatchDecodeError,
    "NUL bytes",
  );
});

test("503 with an HTML page on every watch: KubeStatusError, rewatch after the backoff without relisting (scenario 8)", async () => {
  await withHostileServer({}, async (h) => {
    const { server, store, reflector } = h;
    await reflector.synced;
    await server.waitForWatch();
    const rv = reflector.lastSyncResourceVersion;
    const since = server.requestCount;
    const rule = server.inject({
      verb: "watch",
      times: Infinity,
      fault: { kind: "status", code: 503, body: "html" },
    });
    server.endWatches();
    await h.until(() => errorsWhere(h, isStatusError(503)).length >= 5, "the watch retried");
    const errors = errorsWhere(h, isStatusError(503)) as KubeStatusError[];
    assert.ok(rule.fired >= 5);
    assert.equal(errors[0].status, undefined, "an HTML page is not taken for a Status");
    assert.doesNotMatch(errors[0].message, /<html|nginx/, "the page is described, not quoted");
    const requests = requestsSince(server, since);
    assertPaced(h, requests, "watch", 1, "503 html");
    assert.ok(requests.every((r) => r.verb === "watch"), "no relist for a 503");
    assert.ok(requests.every((r) => r.query.get("resourceVersion") === rv), "rewatch from the RV");
    assert.equal(h.settled(), false);
    rule.cancel();
    server.create(configMap("healed"));
    await h.until(() => storeEqualsServer(store, server), "store = server");
  });
});

test("500 with a plain-text body on every list: KubeStatusError, not synced, relisted after the backoff, synced once healed (scenario 8)", async () => {
  let rule: { fired: number; cancel(): void } | undefined;
  await withHostileServer({
    beforeStart: (s) => {
      rule = s.inject({
        verb: "list",
        times: Infinity,
        fault: { kind: "status", code: 500, body: "text" },
      });
    },
  }, async (h) => {
    const { server, store, reflector } = h;
    await h.until(() => errorsWhere(h, isStatusError(500)).length >= 5, "the list retried");
    assert.ok(rule!.fired >= 5);
    assert.ok(h.errors.every((e) => e.phase === "list"));
    assertPaced(h, requestsSince(server, 0), "list", 1, "500 text");
    assert.equal(reflector.hasSynced(), false);
    assert.equal(store.replaced.length, 0);
    assert.equal(h.settled(), false);
    rule!.cancel();
    await reflector.synced;
    server.create(configMap("healed"));
    await h.until(() => storeEqualsServer(store, server), "store = server");
  });
});

// ---------------------------------------------------------------------------
// 200 list bodies that are not lists, on a relist
// ---------------------------------------------------------------------------

const BAD_LISTS = BAD_LIST_BODIES;

for (const { name, fault, expected } of BAD_LISTS) {
  test(`${name} on a relist: a typed error, the store keeps its objects, relisted after the backoff, store = server once healed`, async () => {
    await withHostileServer({}, async (h) => {
      const { server, store, reflector } = h;
      await reflector.synced;
      await server.waitForWatch();
      const rv = reflector.lastSyncResourceVersion;
      const kept = store.listKeys().sort();
      const since = server.requestCount;
      const rule = server.inject({ verb: "list", times: Infinity, fault });
      server.inject({ verb: "watch", fault: { kind: "status", code: 410 } });
      server.endWatches(); // the rewatch gets a 410: relist
      // Stops waiting as soon as a bad list is taken for a list (replacing the store).
      const listErrors = () => h.errors.filter((e) => e.phase === "list").length;
      await h.until(() => listErrors() >= 4 || store.replaced.length > 1, "the relist retried");
      assert.deepEqual(store.replaced, [3], "no bad list replaced the store");
      assert.ok(errorsWhere(h, expected).length >= 4, "a typed error for each");
      assert.ok(
        h.errors.filter((e) => e.phase === "list").every((e) => expected(e.error)),
        `every list error is the expected one: ${
          h.errors.map((e) => e.error instanceof Error ? e.error.message : e.error)
        }`,
      );
      const lists = requestsSince(server, since, ["list"]);
      assertPaced(h, lists, "list", 1, name);
      for (const r of lists) assert.equal(r.query.get("resourceVersion"), rv);
      assert.deepEqual(store.replaced, [3], "still no bad list replaced the store");
      assert.deepEqual(store.listKeys().sort(), kept, "the store keeps its objects");
      assert.equal(reflector.lastSyncResourceVersion, rv);
      assert.equal(h.settled(), false);

      server.create(configMap("during"));
      rule.cancel();
      await h.until(() => storeEqualsServer(store, server), "store = server once healed");
      assert.equal(reflector.lastSyncResourceVersion, server.resourceVersion);
      assert.equal(h.settled(), false);
    });
  });
}

test("a Status with status Failure as the first list's 200 body: never synced from it, store empty, synced once healed", async () => {
  let rule: { fired: number; cancel(): void } | undefined;
  await withHostileServer({
    beforeStart: (s) => {
      rule = s.inject({
        verb: "list",
        times: Infinity,
        fault: { kind: "raw", data: STATUS_FAILURE },
      });
    },
  }, async (h) => {
    const { server, store, reflector } = h;
    await h.until(
      () => errorsWhere(h, isStatusError(500, /etcdserver/)).length >= 5,
      "the list retried",
    );
    assert.ok(rule!.fired >= 5);
    assert.equal(reflector.hasSynced(), false, "a Status is not an empty list");
    assert.equal(store.replaced.length, 0);
    assert.equal(reflector.lastSyncResourceVersion, "");
    assert.notEqual(reflector.status.state, "watching");
    assert.equal(requestsSince(server, 0, ["watch"]).length, 0, "no watch without a list");
    assertPaced(h, requestsSince(server, 0), "list", 1, "Status as the first list");
    assert.equal(h.settled(), false);
    rule!.cancel();
    await reflector.synced;
    assert.ok(storeEqualsServer(store, server));
  });
});

// ---------------------------------------------------------------------------
// List items that are not objects
// ---------------------------------------------------------------------------

for (const expectedKind of ["ConfigMap", undefined]) {
  test(`null, number and array list items are reported and left out, the rest is stored (expectedKind ${expectedKind ?? "unset"})`, async () => {
    await withHostileServer({
      reflector: { expectedKind },
      beforeStart: (s) => {
        const items: unknown[] = s.objects({ resource: "configmaps", namespace: "fx" });
        items.splice(1, 0, null, 42, ["not", "an", "object"]);
        const body = JSON.stringify({
          kind: "ConfigMapList",
          apiVersion: "v1",
          metadata: { resourceVersion: s.resourceVersion },
          items,
        });
        s.inject({ verb: "list", fault: { kind: "raw", data: body } });
      },
    }, async (h) => {
      const { server, store, reflector } = h;
      await reflector.synced;
      assert.ok(storeEqualsServer(store, server), "the objects are stored");
      const bad = errorsWhere(
        h,
        (e) => e instanceof MalformedResponseError,
      ) as MalformedResponseError[];
      assert.equal(bad.length, 3, `each bad item reported: ${bad.map((e) => e.message)}`);
      assert.deepEqual(bad.map((e) => e.where), ["list item", "list item", "list item"]);
      assert.match(bad[0].problem, /null/);
      assert.match(bad[1].problem, /number/);
      assert.match(bad[2].problem, /array/);
      assert.deepEqual(store.replaced, [3]);
      server.create(configMap("after"));
      await h.until(() => storeEqualsServer(store, server), "store = server");
      assert.equal(h.settled(), false);
    });
  });
}

// ---------------------------------------------------------------------------
// Retry-After that is not a number, or far too long
// ---------------------------------------------------------------------------

const BAD_RETRY_AFTER: Array<{ header: string; verb: FaultVerb; fault: StatusFault }> = [
  {
    header: "soon",
    verb: "watch",
    fault: { kind: "status", code: 429, body: "text", retryAfter: "soon" },
  },
  // The Status's details.retryAfterSeconds is bad as well: null (NaN in JSON), then -5.
  { header: "NaN", verb: "watch", fault: { kind: "status", code: 429, retryAfterSeconds: NaN } },
  { header: "-5", verb: "watch", fault: { kind: "status", code: 429, retryAfterSeconds: -5 } },
  {
    header: "soon",
    verb: "list",
    fault: { kind: "status", code: 429, body: "text", retryAfter: "soon" },
  },
];

for (const { header, verb, fault } of BAD_RETRY_AFTER) {
  test(`429 with Retry-After "${header}" on every ${verb}: ignored, the backoff paces the retries, never a zero wait`, async () => {
    let rule: { fired: number; cancel(): void } | undefined;
    const inject = (s: FakeApiServer) => (rule = s.inject({ verb, times: Infinity, fault }));
    await withHostileServer({ beforeStart: verb === "list" ? inject : undefined }, async (h) => {
      const { server, store, reflector } = h;
      let since = 0;
      if (verb === "watch") {
        await reflector.synced;
        await server.waitForWatch();
        since = server.requestCount;
        inject(server);
        server.endWatches();
      }
      await h.until(() => errorsWhere(h, isStatusError(429)).length >= 5, `the ${verb} retried`);
      const errors = errorsWhere(h, isStatusError(429)) as KubeStatusError[];
      assert.ok(rule!.fired >= 5);
      assert.ok(errors.every((e) => e.retryAfterMs === undefined), "the bad value is dropped");
      const requests = requestsSince(server, since);
      assertPaced(h, requests, verb, 1, `Retry-After ${header}`);
      const waited = waitsBetween(h.waits, requests[0], requests.at(-1)!);
      assert.ok(
        waited.every((ms) => ms <= BACKOFF.capMs),
        `the backoff (at most ${BACKOFF.capMs} ms), not a Retry-After read as seconds: ${waited}`,
      );
      if (verb === "watch") {
        assert.ok(requests.every((r) => r.verb === "watch"), "no relist for a watch 429");
      } else assert.equal(reflector.hasSynced(), false);
      assert.equal(h.settled(), false);
      rule!.cancel();
      await reflector.synced;
      server.create(configMap("healed"));
      await h.until(() => storeEqualsServer(store, server), "store = server");
    });
  });
}

test("429 with Retry-After of 30 days and maxRetryAfterMs 100: list and watch retried after 100 ms, not never", async () => {
  const month: Fault = { kind: "status", code: 429, retryAfterSeconds: 2_592_000 };
  await withHostileServer({
    reflector: { maxRetryAfterMs: 100 },
    beforeStart: (s) => {
      s.inject({ verb: "list", fault: month });
      s.inject({ verb: "watch", fault: month });
    },
  }, async (h) => {
    const { server, store, reflector } = h;
    await reflector.synced;
    await server.waitFor(() => server.openWatches === 1); // the watch retried and open
    const errors = errorsWhere(h, isStatusError(429)) as KubeStatusError[];
    assert.equal(errors.length, 2);
    assert.ok(errors.every((e) => e.retryAfterMs === 2_592_000_000), "the server's ask is kept");
    for (const verb of ["list", "watch"] as const) {
      const [first, second] = requestsSince(server, 0, [verb]);
      assert.deepEqual(
        waitsBetween(h.waits, first, second),
        [100],
        `${verb}: the wait is maxRetryAfterMs, not the backoff's 20 ms nor 30 days`,
      );
    }
    server.create(configMap("later"));
    await h.until(() => storeEqualsServer(store, server), "store = server");
    assert.equal(h.settled(), false);
  });
});
