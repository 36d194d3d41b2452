/**
 * The recovery rules on a ManualClock: a scripted ListerWatcher fails in
 * each way a server can, and the tests advance fake time explicitly to see
 * exactly when each request is made. Wire-level behaviour is tested over
 * real HTTP in watcher_test.ts and hostile_server_test.ts.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  KubeNetworkError,
  ListTimeoutError,
  StreamingListUnsupportedError,
  WatchIdleTimeoutError,
} from "../../src/api/errors.ts";
import type { ServerFeatures } from "../../src/transport/server_features.ts";
import type { WatchOptions } from "../../src/transport/lister_watcher.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import { RequestRefusedError } from "../../src/api/request_refused_error.ts";
import type { KubeObject, WatchEvent } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import { systemClock } from "../../src/async/clock.ts";
import { Reflector, type ReflectorOptions } from "../../src/reflector/reflector.ts";
import type { ErrorPhase } from "../../src/reflector/watcher_options.ts";
import { ManualClock } from "../../testkit.ts";
import { cm, ev, events, ScriptedListerWatcher, untilAborted } from "./_scripted_lister_watcher.ts";

const GONE = () => new KubeStatusError({ code: 410, status: { reason: "Expired" } });
/**
 * When the second watch starts: the first, open and quiet, is cut by its idle
 * deadline (random 0: a 300 s watch timeout plus 30 s grace), then the
 * reconnect backoff's first 800 ms.
 */
const IDLE_END = 330_000 + 800;
const REFUSED = () => new KubeNetworkError("GET /api/v1/configmaps", new Error("ECONNREFUSED"));

async function setup(
  options: ReflectorOptions = {},
  store: Indexer<KubeObject> = new Indexer(metaNamespaceKeyFunc),
  before?: (lw: ScriptedListerWatcher) => void,
) {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("a", "5"), cm("b", "6")];
  before?.(lw);
  const errors: Array<{ error: unknown; phase: ErrorPhase; at: number }> = [];
  const reflector = new Reflector(lw, store, {
    clock,
    random: () => 0,
    useStreamingList: false, // the scripted watch ignores sendInitialEvents unless a test scripts it
    onError: (error, phase) => errors.push({ error, phase, at: clock.now() }),
    ...options,
  });
  const ac = new AbortController();
  let settled = false;
  const done = reflector.run({ signal: ac.signal }).finally(() => (settled = true));
  await clock.flush();
  return {
    clock,
    lw,
    reflector,
    store,
    errors,
    running: () => !settled,
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

test("a poison event on every watch from a version: relist after the backoff, and later changes are applied", async () => {
  const t = await setup();
  try {
    await t.reflector.synced;
    // From version 10 the server sends a line we cannot use, every time.
    t.lw.onWatch = (o) =>
      o.resourceVersion === "10"
        ? events([{ type: "ADDED", object: { kind: "ConfigMap" } } as unknown as WatchEvent], o)
        : events([], o);
    t.lw.objects = [cm("a", "5")]; // b deleted at 12, behind the poison
    t.lw.resourceVersion = "12";
    // the open watch is cut by its idle deadline; the rewatch from 10 meets the poison
    await t.clock.advance(330_000 + 800);
    assert.ok(t.errors.some((e) => e.error instanceof MalformedResponseError));
    const poisonedAt = t.errors.find((e) => e.error instanceof MalformedResponseError)!.at;
    await t.clock.advance(799);
    assert.equal(t.lw.of("list").length, 1, "no relist before the backoff");
    await t.clock.advance(1);
    assert.equal(t.lw.of("list").length, 2, "a relist once the backoff is over");
    assert.equal(t.lw.of("list")[1].rv, "10", "from the last applied version");
    assert.equal(t.lw.of("list")[1].at - poisonedAt, 800);
    assert.deepEqual(t.store.listKeys(), ["ns/a"], "the delete behind the poison is seen");
    assert.equal(t.lw.of("watch").at(-1)!.rv, "12", "the watch resumes past the poison");
    assert.ok(t.running());
  } finally {
    await t.stop();
  }
});

test("an ERROR event whose Status is not 410 relists after the backoff", async () => {
  const t = await setup();
  try {
    await t.reflector.synced;
    t.lw.onWatch = (o, n) =>
      n === 1
        ? events([ev("ERROR", { kind: "Status", code: 500, reason: "InternalError" } as never)], o)
        : events([], o);
    await t.clock.advance(300_000 * 2 + 30_000); // the first watch's idle deadline ends it
    assert.ok(t.errors.some((e) => e.error instanceof KubeStatusError && e.error.code === 500));
    assert.equal(t.lw.of("list").length, 2, "relisted");
    assert.ok(t.running());
  } finally {
    await t.stop();
  }
});

test("after an outage, the store catches up within 5 s of the server coming back (default options, worst jitter)", async () => {
  const t = await setup({ random: () => 0.999 });
  try {
    await t.reflector.synced;
    let down = true;
    let expired = false;
    t.lw.onWatch = (o) => {
      if (down) throw REFUSED();
      if (!expired) {
        expired = true;
        throw GONE(); // the restarted server no longer has our version
      }
      return events([], o);
    };
    t.lw.onList = () => {
      if (down) throw REFUSED();
      return { metadata: { resourceVersion: "50" }, items: [cm("a", "5"), cm("c", "49")] };
    };
    // The open watch is lost (its idle deadline cuts it), and the server is down.
    await t.clock.advance(700_000);
    const outageStart = t.clock.now();
    const before = t.lw.calls.length;
    await t.clock.advance(30_000);
    const during = t.lw.calls.length - before;
    assert.ok(during <= 30_000 / 2_000 + 2, `${during} requests in a 30 s outage`);
    assert.ok(during >= 30_000 / 4_000 - 1, `still probing: ${during} requests`);
    down = false;
    const readyAt = t.clock.now();
    let caughtUpAt: number | undefined;
    for (let i = 0; i < 100 && caughtUpAt === undefined; i++) {
      await t.clock.advance(100);
      if (t.store.getByKey("ns/c")) caughtUpAt = t.clock.now();
    }
    assert.ok(caughtUpAt !== undefined, "caught up");
    assert.ok(caughtUpAt! - readyAt <= 5_000, `caught up ${caughtUpAt! - readyAt} ms after ready`);
    assert.ok(outageStart > 0);
  } finally {
    await t.stop();
  }
});

test("a watch answered 410 at once after reconnecting relists at once: one wait, not two", async () => {
  const t = await setup();
  try {
    await t.reflector.synced;
    t.lw.onWatch = (o, n) => {
      if (n === 1) throw REFUSED();
      if (n === 2) throw GONE();
      return events([], o);
    };
    await t.clock.advance(IDLE_END); // idle deadline ends watch 0, rewatch after the reconnect backoff
    const refusedAt = t.lw.of("watch")[1].at;
    await t.clock.advance(1_600); // the reconnect backoff's second step
    assert.ok(t.lw.of("watch").length >= 3);
    assert.equal(t.lw.of("watch")[2].at - refusedAt, 1_600);
    assert.equal(t.lw.of("list").length, 2, "relisted at once after the 410");
    assert.equal(t.lw.of("list")[1].at, t.lw.of("watch")[2].at);
  } finally {
    await t.stop();
  }
});

test("Retry-After: 30 days is capped at maxRetryAfterMs; NaN, negative and non-numbers never make a zero wait", async () => {
  for (
    const [retryAfterMs, expected] of [
      [30 * 86_400_000, 60_000],
      [Number.NaN, 800],
      [-5_000, 800],
      [Number.POSITIVE_INFINITY, 800],
      ["soon" as unknown as number, 800],
    ] as const
  ) {
    const t = await setup();
    try {
      await t.reflector.synced;
      t.lw.onWatch = (o, n) => {
        if (n === 1) throw new KubeStatusError({ code: 429, retryAfterMs });
        return events([], o);
      };
      await t.clock.advance(IDLE_END);
      const failedAt = t.lw.of("watch")[1].at;
      await t.clock.advance(expected - 1);
      assert.equal(t.lw.of("watch").length, 2, `${retryAfterMs}: not before ${expected} ms`);
      await t.clock.advance(1);
      assert.equal(t.lw.of("watch").length, 3, `${retryAfterMs}: retried after ${expected} ms`);
      assert.equal(t.lw.of("watch")[2].at - failedAt, expected);
    } finally {
      await t.stop();
    }
  }
});

test("no hot loop from any failure: an hour of fake time stays within the backoff schedule", async () => {
  const HOUR = 3_600_000;
  const bad = () => ({ metadata: { resourceVersion: {} }, items: [] }) as never;
  const cases: Array<[string, (t: Awaited<ReturnType<typeof setup>>) => void, number]> = [
    [
      "list 500",
      (t) => (t.lw.onList = () => Promise.reject(new KubeStatusError({ code: 500 }))),
      30_000,
    ],
    [
      "list 429 Retry-After NaN",
      (
        t,
      ) => (t.lw.onList = () =>
        Promise.reject(new KubeStatusError({ code: 429, retryAfterMs: NaN }))),
      30_000,
    ],
    ["list refused", (t) => (t.lw.onList = () => Promise.reject(REFUSED())), 30_000],
    ["list malformed", (t) => (t.lw.onList = bad), 30_000],
    ["list throws synchronously", (t) => (t.lw.onList = () => {
      throw new Error("bug");
    }), 30_000],
    ["watch refused", (t) => (t.lw.onWatch = () => {
      throw REFUSED();
    }), 2_000],
    ["watch 503 Retry-After -1", (t) => (t.lw.onWatch = () => {
      throw new KubeStatusError({ code: 503, retryAfterMs: -1 });
    }), 30_000],
    ["watch 410 at once", (t) => (t.lw.onWatch = () => {
      throw GONE();
    }), 30_000 / 2],
    ["short watch", (t) => (t.lw.onWatch = (o) => events([], o, "close")), 30_000],
    [
      "poison event",
      (t) => (t.lw.onWatch = (o) => events([{ type: "ADDED", object: {} } as never], o)),
      30_000 / 2,
    ],
    [
      "ERROR 500 event",
      (t) => (t.lw.onWatch = (o) => events([ev("ERROR", { code: 500 } as never)], o)),
      30_000 / 2,
    ],
    ["watch returns no iterable", (t) => (t.lw.onWatch = () => 42 as never), 30_000 / 2],
    ["watch throws synchronously", (t) => (t.lw.onWatch = () => {
      throw new TypeError("bug");
    }), 30_000 / 2],
    // sequences found by review: each quick answer must be followed by a wait
    ["one new bookmark then close, and a 410 at once on the rewatch", (t) => {
      let v = 100;
      t.lw.onWatch = (o, n) => {
        if (n % 2 === 0) throw GONE();
        return events(
          [ev("BOOKMARK", { metadata: { resourceVersion: String(++v) } } as never)],
          o,
          "close",
        );
      };
      t.lw.onList = () => ({ metadata: { resourceVersion: String(++v) }, items: [] });
    }, 30_000 / 3],
    ["one event of another kind then close", (t) => {
      t.lw.onWatch = (o) => events([ev("ADDED", { ...cm("s", "11"), kind: "Secret" })], o, "close");
    }, 30_000],
    ["a bookmark at the same version then close", (t) => {
      t.lw.onWatch = (o) =>
        events([ev("BOOKMARK", { metadata: { resourceVersion: "10" } } as never)], o, "close");
    }, 30_000],
    ["a bookmark without a resourceVersion", (t) => {
      t.lw.onWatch = (o) => events([ev("BOOKMARK", { metadata: {} } as never)], o);
    }, 30_000 / 2],
    ["list: the same continue token on every page", (t) => {
      t.lw.onList = () => ({ metadata: { resourceVersion: "10", continue: "again" }, items: [] });
    }, 30_000 / 2], /* two pages per attempt */
  ];
  for (const [name, inject, steadyGap] of cases) {
    const t = await setup();
    try {
      await t.reflector.synced;
      inject(t);
      if (name.startsWith("list")) {
        t.lw.onWatch = () => {
          throw GONE();
        };
      }
      await t.clock.advance(330_000); // the open watch ends at its idle deadline
      const from = t.lw.calls.length;
      await t.clock.advance(HOUR);
      const n = t.lw.calls.length - from;
      // the schedule: at most one request per steady gap, plus the ramp up to the cap
      // (requests per wait, times the waits of the ramp up to the cap)
      const allowed = HOUR / steadyGap + 8 * Math.max(1, Math.round(30_000 / steadyGap));
      assert.ok(n <= allowed, `${name}: ${n} requests in an hour, allowed ${allowed}`);
      assert.ok(n >= HOUR / (steadyGap * 2) / 2, `${name}: still trying (${n} requests)`);
      assert.ok(t.running(), `${name}: run() goes on`);
      assert.ok(t.errors.length > 0, `${name}: reported`);
    } finally {
      await t.stop();
    }
  }
});

test("a store that fails to apply an event is reported, and the reflector relists after the backoff", async () => {
  let failOnce = true;
  class Flaky extends Indexer<KubeObject> {
    override update(obj: KubeObject): void {
      if (obj.metadata.name === "c" && failOnce) {
        failOnce = false;
        throw new Error("disk full");
      }
      super.update(obj);
    }
  }
  const t = await setup({}, new Flaky(metaNamespaceKeyFunc));
  try {
    await t.reflector.synced;
    t.lw.onWatch = (o, n) => n === 1 ? events([ev("ADDED", cm("c", "11"))], o) : events([], o);
    t.lw.objects = [cm("a", "5"), cm("b", "6"), cm("c", "11")];
    t.lw.resourceVersion = "11";
    await t.clock.advance(IDLE_END);
    const failure = t.errors.find((e) => e.phase === "store");
    assert.ok(failure, "reported with phase store");
    await t.clock.advance(799);
    assert.equal(t.lw.of("list").length, 1);
    await t.clock.advance(1);
    assert.equal(t.lw.of("list").length, 2, "relisted after the backoff");
    assert.equal(t.lw.of("list")[1].rv, "10", "from the last version applied");
    assert.ok(t.store.getByKey("ns/c"), "the missed object arrives with the relist");
    assert.ok(t.running());
  } finally {
    await t.stop();
  }
});

test("a ListerWatcher that throws synchronously or returns no async iterable is reported; run() goes on", async () => {
  for (const kind of ["list-throws", "watch-throws", "watch-not-iterable"] as const) {
    const t = await setup({}, undefined, (lw) => {
      if (kind !== "list-throws") return;
      let n = 0;
      lw.list = (o) => {
        if (n++ === 0) throw new TypeError("broken lister");
        return ScriptedListerWatcher.prototype.list.call(lw, o);
      };
    });
    try {
      if (kind === "list-throws") await t.clock.advance(800);
      await t.reflector.synced;
      if (kind !== "list-throws") {
        t.lw.onWatch = (o, n) => {
          if (n !== 1) return events([], o);
          if (kind === "watch-throws") throw new TypeError("broken watcher");
          return null as never;
        };
        await t.clock.advance(IDLE_END + 800);
      }
      assert.ok(t.errors.length >= 1, `${kind}: reported`);
      assert.ok(t.running(), `${kind}: run() goes on`);
      assert.equal(t.lw.of("list").length, kind === "list-throws" ? 1 : 2, `${kind}: relisted`);
    } finally {
      await t.stop();
    }
  }
});

test("a ListerWatcher whose watchBatches returns no async iterable or yields a non-array is reported and relisted; its batches are applied in order", async () => {
  for (const kind of ["not-iterable", "not-array", "good"] as const) {
    const t = await setup({}, undefined, (lw) => {
      (lw as { watchBatches?: unknown }).watchBatches = (o: WatchOptions) => {
        const n = lw.of("watch").length;
        lw.calls.push({ verb: "watch", at: lw.clock.now(), rv: o.resourceVersion, options: o });
        if (n === 0 || kind === "good") {
          return (async function* () {
            o.onConnected?.();
            if (n === 0 && kind !== "good") {
              await new Promise((r) => o.signal?.addEventListener("abort", r));
              return;
            }
            yield [ev("ADDED", cm("c", "11")), ev("MODIFIED", cm("a", "12", { v: "2" }))];
            yield [ev("DELETED", cm("b", "13"))];
            await new Promise((r) => o.signal?.addEventListener("abort", r));
          })();
        }
        if (kind === "not-iterable") return 42;
        return (async function* () {
          o.onConnected?.();
          yield ev("ADDED", cm("c", "11"));
        })();
      };
    });
    try {
      await t.reflector.synced;
      await t.clock.advance(kind === "good" ? 10 : IDLE_END + 800);
      if (kind === "good") {
        assert.deepEqual(t.store.listKeys().sort(), ["ns/a", "ns/c"]);
        assert.equal(t.store.getByKey("ns/a")!.metadata.resourceVersion, "12");
        assert.equal(t.reflector.lastSyncResourceVersion, "13");
        assert.equal(t.errors.length, 0);
        continue;
      }
      assert.ok(
        t.errors.some((e) => e.error instanceof MalformedResponseError),
        `${kind}: reported`,
      );
      assert.ok(t.running(), `${kind}: run() goes on`);
      assert.equal(t.lw.of("list").length, 2, `${kind}: relisted`);
    } finally {
      await t.stop();
    }
  }
});

test("streaming list: a DELETED or MODIFIED before the end bookmark updates the pending snapshot", async () => {
  const t = await setup({ useStreamingList: true }, undefined, (lw) => {
    lw.onWatch = (o) =>
      events([
        ev("ADDED", cm("a", "5")),
        ev("ADDED", cm("b", "6")),
        ev("MODIFIED", cm("a", "7", { v: "2" })),
        ev("DELETED", cm("b", "8")),
        ev("ADDED", cm("c", "9")),
        ev("BOOKMARK", {
          metadata: { resourceVersion: "9", annotations: { "k8s.io/initial-events-end": "true" } },
        } as KubeObject),
        ev("DELETED", cm("c", "10")),
      ], o);
  });
  try {
    await t.clock.flush();
    await t.reflector.synced;
    assert.deepEqual(t.store.listKeys().sort(), ["ns/a"]);
    assert.deepEqual((t.store.getByKey("ns/a") as unknown as { data: unknown }).data, { v: "2" });
    assert.equal(t.lw.of("list").length, 0, "no LIST");
    assert.equal(t.reflector.lastSyncResourceVersion, "10", "the same stream goes on as a watch");
  } finally {
    await t.stop();
  }
});

test("streaming lists that fail repeatedly fall back to a paginated LIST; one without its bookmark is bounded by listTimeoutMs", async () => {
  let n = 0;
  const t = await setup({ useStreamingList: true, listTimeoutMs: 10_000 }, undefined, (lw) => {
    lw.onWatch = (o) => {
      n++;
      if (n === 1) return events([ev("ADDED", cm("a", "5"))], o, "close"); // ends without bookmark
      if (n === 2) throw REFUSED(); // fails mid-way
      return events([ev("ADDED", cm("a", "5"))], o); // never sends its bookmark
    };
  });
  try {
    await t.clock.advance(800); // after the first failure
    await t.clock.advance(1_600); // after the second
    assert.equal(t.lw.of("list").length, 0);
    await t.clock.advance(10_000); // the third attempt hits its deadline
    assert.ok(t.errors.some((e) => e.error instanceof ListTimeoutError));
    await t.clock.advance(3_200);
    assert.equal(t.lw.of("list").length, 1, "one LIST after three failed streaming attempts");
    assert.equal((t.lw.of("list")[0].options as { limit?: number }).limit, 500, "paginated");
    await t.reflector.synced;
    assert.deepEqual(t.store.listKeys().sort(), ["ns/a", "ns/b"]);
  } finally {
    await t.stop();
  }
});

test("list items that are null, numbers, arrays or lack metadata are reported and left out, with or without expectedKind", async () => {
  for (const expectedKind of [undefined, "ConfigMap"]) {
    const t = await setup({ expectedKind }, undefined, (lw) => {
      lw.objects = [cm("a", "5"), null, 42, [1], { kind: "ConfigMap" }, cm("b", "6")] as never;
    });
    try {
      await t.reflector.synced;
      assert.deepEqual(t.store.listKeys().sort(), ["ns/a", "ns/b"]);
      const malformed = t.errors.filter((e) => e.error instanceof MalformedResponseError);
      assert.equal(malformed.length, 4, `${expectedKind}: each reported`);
      assert.ok(t.running());
    } finally {
      await t.stop();
    }
  }
});

test("periods beyond setTimeout's limit work as written: a 30-day resync fires after 30 days, not every millisecond", async () => {
  let resyncs = 0;
  class Counting extends Indexer<KubeObject> {
    override resync(): void {
      resyncs++;
    }
  }
  const DAY = 86_400_000;
  const t = await setup(
    { resyncPeriodMs: 30 * DAY, minWatchTimeoutMs: 40 * DAY },
    new Counting(metaNamespaceKeyFunc),
  );
  try {
    await t.reflector.synced;
    await t.clock.advance(30 * DAY - 1);
    assert.equal(resyncs, 0);
    await t.clock.advance(1);
    assert.equal(resyncs, 1);
  } finally {
    await t.stop();
  }
  // the real clock splits long timers instead of firing them at once
  let fired = false;
  const h = systemClock.setTimeout(() => (fired = true), 2 ** 31 + 5);
  await new Promise((r) => setTimeout(r, 20));
  systemClock.clearTimeout(h);
  assert.equal(fired, false);
  assert.throws(() => systemClock.setTimeout(() => {}, NaN), RangeError);
});

test("absurd option values are refused at construction with a RangeError or TypeError", () => {
  const lw = new ScriptedListerWatcher(new ManualClock());
  const store = new Indexer(metaNamespaceKeyFunc);
  for (
    const options of [
      { resyncPeriodMs: Infinity },
      { resyncPeriodMs: NaN },
      { listTimeoutMs: -1 },
      { maxRetryAfterMs: Infinity },
      { idleTimeoutMs: Infinity },
      { minWatchTimeoutMs: NaN },
      { backoff: { capMs: Infinity } },
      { reconnectBackoff: { initialMs: -1 } },
      { streamingListAttempts: 0 },
      { pageSize: 1.5 },
    ] as ReflectorOptions[]
  ) {
    assert.throws(() => new Reflector(lw, store, options), RangeError, JSON.stringify(options));
  }
  assert.throws(() => new Reflector(lw, store, { backoff: 5 as never }), TypeError);
});

test("status shows when the store is stale: watching, since when, the last event and error", async () => {
  const t = await setup();
  try {
    await t.reflector.synced;
    await t.clock.flush();
    assert.equal(t.reflector.status.state, "connecting", "accepted, not yet proven");
    await t.clock.advance(1_000); // open for shortWatchMs: proven
    assert.equal(t.reflector.status.state, "watching");
    assert.equal(t.reflector.status.watching, true);
    t.lw.onWatch = () => {
      throw REFUSED();
    };
    await t.clock.advance(329_000);
    const s = t.reflector.status;
    assert.equal(s.watching, false);
    assert.equal(s.state, "waiting");
    assert.equal(s.since, 330_000, "stale since the watch was lost");
    assert.ok(s.lastError?.error instanceof Error);
    // Watches accepted and closed at once, again and again, never count as current.
    t.lw.onWatch = (o) => events([], o, "close");
    await t.clock.advance(10_000);
    assert.equal(t.reflector.status.watching, false);
    assert.equal(t.reflector.status.since, 330_000, "still stale since then");
    t.lw.onWatch = (o) =>
      events([ev("BOOKMARK", { metadata: { resourceVersion: "11" } } as never)], o);
    await t.clock.advance(30_000); // past the short watches' backoff
    assert.equal(t.reflector.status.watching, true);
    assert.ok(t.reflector.status.lastEventAt! >= 340_000);
  } finally {
    await t.stop();
  }
  assert.equal(t.reflector.status.state, "stopped");
});

test("status.lastEventAt is when the last read of events arrived: the clock is read once per read, not once per event", async () => {
  const gate = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };
  const gates = [gate(), gate()];
  const t = await setup({}, undefined, (lw) => {
    // one array per network read, as the HTTP lister-watcher hands them on
    (lw as { watchBatches?: unknown }).watchBatches = (o: WatchOptions) =>
      (async function* () {
        o.onConnected?.();
        for (const [n, gate] of gates.entries()) {
          await gate.promise;
          yield Array.from(
            { length: 50 },
            (_, i) => ev("MODIFIED", cm(`o${i}`, String(100 * (n + 1) + i))),
          );
        }
        await untilAborted(o.signal);
      })();
  });
  try {
    await t.reflector.synced;
    await t.clock.flush();
    const now = t.clock.now.bind(t.clock);
    let reads = 0;
    t.clock.now = () => (reads++, now());
    const start = t.clock.now();
    gates[0].resolve();
    await t.clock.flush();
    assert.equal(t.store.getByKey("ns/o49")?.metadata.resourceVersion, "149");
    assert.equal(t.reflector.status.lastEventAt, start);
    assert.ok(reads < 10, `${reads} clock reads for one read of 50 events`);
    await t.clock.advance(5_000);
    assert.equal(t.reflector.status.lastEventAt, start, "no event since");
    gates[1].resolve();
    await t.clock.flush();
    assert.equal(t.store.getByKey("ns/o49")?.metadata.resourceVersion, "249");
    assert.equal(t.reflector.status.lastEventAt, start + 5_000, "the later read is stamped anew");
  } finally {
    await t.stop();
  }
});

test("a ListerWatcher whose stream ignores its signal cannot freeze the reflector: the idle deadline still moves on, and run() settles on abort", async () => {
  const t = await setup({}, undefined, (lw) => {
    lw.onWatch = (o, n) =>
      n === 0
        ? {
          [Symbol.asyncIterator]: () => ({
            next: () => new Promise<IteratorResult<WatchEvent>>(() => {}), // never settles
          }),
        }
        : events([], o);
  });
  try {
    await t.reflector.synced;
    await t.clock.advance(330_000); // the idle deadline of the stuck watch
    await new Promise((r) => setTimeout(r, 150)); // the grace given to a stream to settle
    await t.clock.advance(800); // the reconnect backoff
    assert.equal(t.lw.of("watch").length, 2, "watched again");
    assert.ok(t.running());
  } finally {
    await t.stop();
  }
});

test("a random source returning NaN or negatives never makes a zero wait", async () => {
  for (const random of [() => NaN, () => -1]) {
    const t = await setup({ random });
    try {
      await t.reflector.synced;
      t.lw.onWatch = () => {
        throw new KubeStatusError({ code: 503 });
      };
      await t.clock.advance(IDLE_END);
      const n = t.lw.of("watch").length;
      assert.equal(n, 2);
      await t.clock.advance(799);
      assert.equal(t.lw.of("watch").length, n, "the backoff's base delay still applies");
      const w = t.lw.of("watch")[1].options as { timeoutSeconds?: number };
      assert.equal(w.timeoutSeconds, 300, "a finite watch timeout");
    } finally {
      await t.stop();
    }
  }
});

test("the idle deadline adapts per server: after periodic bookmarks a watch silent since its last bookmark is cut in 90 s, then the safe default returns", async () => {
  const features: ServerFeatures = {};
  const t = await setup({}, undefined, (lw) => {
    lw.features = features;
    // watch 0: two bookmarks 60 s apart, then closes; watch 1: one bookmark, then silence
    lw.onWatch = (o, n) =>
      n === 0
        ? bookmarksAfter(lw.clock, o, [60_000, 60_000])
        : n === 1
        ? bookmarksAfter(lw.clock, o, [60_000, 1e9])
        : events([], o);
  });
  try {
    await t.reflector.synced;
    await t.clock.advance(120_000); // two bookmarks, 60 s apart; the watch closes
    assert.equal(features.bookmarkIntervalMs, 60_000, "periodic bookmarks seen");
    assert.equal(t.lw.of("watch").length, 2, "rewatched at once");
    await t.clock.advance(60_000 + 90_000 - 1);
    assert.equal(t.lw.of("watch").length, 2, "not cut before 90 s after its bookmark");
    await t.clock.advance(1 + 800); // the 90 s deadline, then the reconnect backoff
    assert.equal(t.lw.of("watch").length, 3, "cut 90 s after its last bookmark");
    const cut = t.errors.find((e) => e.error instanceof WatchIdleTimeoutError)!.error as Error;
    assert.match(cut.message, /learnt from the server's periodic bookmarks, one every 60 s/);
    assert.equal(features.bookmarkIntervalMs, undefined, "treated as silent again");
    await t.clock.advance(329_000);
    assert.equal(t.lw.of("watch").length, 3, "the safe default (watch timeout + grace) again");
  } finally {
    await t.stop();
  }
});

test("a fresh watch to a server with learnt bookmarks gets two intervals + 30 s before its first bookmark (the server skips one whose version is not past the watch's start)", async () => {
  const features: ServerFeatures = {};
  const t = await setup({}, undefined, (lw) => {
    lw.features = features;
    // watch 0 learns; watch 1's first periodic bookmark is skipped (comes after 120 s); watch 2 is dead
    lw.onWatch = (o, n) =>
      n === 0
        ? bookmarksAfter(lw.clock, o, [60_000, 60_000])
        : n === 1
        ? bookmarksAfter(lw.clock, o, [120_000, 60_000])
        : events([], o);
  });
  try {
    await t.reflector.synced;
    await t.clock.advance(120_000);
    assert.equal(t.lw.of("watch").length, 2);
    await t.clock.advance(180_000); // watch 1: a bookmark after 120 s, another 60 s later, then it closes
    assert.ok(!t.errors.some((e) => e.error instanceof WatchIdleTimeoutError), "no false cut");
    assert.equal(features.bookmarkIntervalMs, 60_000);
    assert.equal(t.lw.of("watch").length, 3);
    await t.clock.advance(150_000 - 1);
    assert.equal(t.lw.of("watch").length, 3, "a silent fresh watch is not cut before 150 s");
    await t.clock.advance(1 + 800);
    assert.equal(t.lw.of("watch").length, 4, "cut after 150 s");
  } finally {
    await t.stop();
  }
});

test("the learnt bookmark interval is the smallest gap between periodic bookmarks (a skipped one does not lengthen it, the one before the watch's timeout does not shorten it), and the server's version is read once to name it", async () => {
  // a first periodic bookmark skipped; the last one 2 s before the watch's 300 s timeout
  for (const gaps of [[120_000, 60_000, 60_000], [60_000, 60_000, 60_000, 60_000, 58_000]]) {
    const features: ServerFeatures = {};
    let versionReads = 0;
    const t = await setup({}, undefined, (lw) => {
      lw.features = features;
      lw.serverVersion = () => {
        versionReads++;
        features.version = "v1.37.2";
        return Promise.resolve();
      };
      lw.onWatch = (o, n) => (n === 0 ? bookmarksAfter(lw.clock, o, gaps) : events([], o));
    });
    try {
      await t.reflector.synced;
      await t.clock.advance(300_000); // the bookmarks; the watch closes
      assert.equal(features.bookmarkIntervalMs, 60_000, `gaps ${gaps}: the period`);
      assert.equal(versionReads, 1, "the version is read once, when the interval is first learnt");
      await t.clock.advance(150_000 + 800); // the next watch, fresh, is silent
      const cut = t.errors.find((e) => e.error instanceof WatchIdleTimeoutError)!.error as Error;
      assert.match(
        cut.message,
        /learnt from kube-apiserver v1\.37\.2's periodic bookmarks, one every 60 s/,
      );
    } finally {
      await t.stop();
    }
  }
});

test("a server version read that never answers delays nothing for long: the refusal of a streaming list is reported within 5 s, without a version", async () => {
  const features: ServerFeatures = {};
  const t = await setup({ useStreamingList: true }, undefined, (lw) => {
    lw.features = features;
    lw.serverVersion = () => new Promise(() => {}); // ignores its signal too
    lw.onWatch = (o) =>
      o.sendInitialEvents
        ? (() => {
          throw new KubeStatusError({ code: 422 });
        })()
        : events([], o);
  });
  try {
    await t.clock.advance(4_999);
    assert.equal(t.lw.of("list").length, 0, "still waiting for the version");
    await t.clock.advance(1);
    await t.reflector.synced;
    const refusal = t.errors.find((e) => e.error instanceof StreamingListUnsupportedError);
    assert.ok(refusal, "reported");
    assert.equal((refusal.error as StreamingListUnsupportedError).version, undefined);
    assert.equal(features.streamingList, false);
  } finally {
    await t.stop();
  }
});

test("against a server that never sends periodic bookmarks the idle deadline stays at the watch timeout + grace", async () => {
  const features: ServerFeatures = {};
  const t = await setup({}, undefined, (lw) => (lw.features = features));
  try {
    await t.reflector.synced;
    await t.clock.advance(329_999);
    assert.equal(t.lw.of("watch").length, 1);
    assert.equal(features.bookmarkIntervalMs, undefined);
    await t.clock.advance(1 + 800);
    assert.equal(t.lw.of("watch").length, 2);
  } finally {
    await t.stop();
  }
});

test("the initialResourceVersion option is where a reflector's first list starts (not older than it)", async () => {
  const t = await setup({ initialResourceVersion: "42" });
  try {
    await t.reflector.synced;
    assert.equal(t.lw.of("list")[0].rv, "42");
  } finally {
    await t.stop();
  }
});

/** A watch that sends a bookmark after each of `gaps` (ms of fake time), then closes. */
async function* bookmarksAfter(
  clock: ManualClock,
  o: WatchOptions,
  gaps: number[],
): AsyncGenerator<WatchEvent> {
  o.onConnected?.();
  let rv = 10;
  for (const gap of gaps) {
    await new Promise<void>((resolve) => {
      const h = clock.setTimeout(resolve, gap);
      o.signal?.addEventListener("abort", () => {
        clock.clearTimeout(h);
        resolve();
      }, { once: true });
    });
    if (o.signal?.aborted) return;
    yield ev("BOOKMARK", { metadata: { resourceVersion: String(++rv) } } as never);
  }
}

test("a store that fails in the middle of one network read: the relist asks for the last version the store applied, not the version before the read", async () => {
  class FailsOn extends Indexer<KubeObject> {
    override update(obj: KubeObject): void {
      if (obj.metadata?.name === "c") throw new Error("store full");
      super.update(obj);
    }
  }
  const t = await setup({}, new FailsOn(metaNamespaceKeyFunc), (lw) => {
    // one read brings three events; the store takes the first two, then fails
    (lw as unknown as { watchBatches: unknown }).watchBatches = async function* (o: WatchOptions) {
      o.onConnected?.();
      if (o.resourceVersion === "10") {
        yield [ev("ADDED", cm("x", "11")), ev("ADDED", cm("y", "12")), ev("ADDED", cm("c", "13"))];
      }
      await untilAborted(o.signal);
    };
  });
  try {
    await t.reflector.synced;
    await t.clock.advance(800); // the backoff before the relist
    const lists = t.lw.of("list");
    assert.equal(lists.length, 2);
    assert.equal(lists[1].rv, "12", "the version of y, the last event applied");
  } finally {
    await t.stop();
  }
});

test("a watch refused for good (403: a role that may list but not watch) relists after the backoff instead of rewatching forever, and says so", async () => {
  const t = await setup({}, undefined, (lw) => {
    lw.onWatch = () => {
      throw new KubeStatusError({ code: 403, request: "GET /api/v1/namespaces/ns/configmaps" });
    };
  });
  try {
    await t.reflector.synced;
    assert.equal(t.lw.of("list").length, 1);
    t.lw.objects = [cm("a", "5"), cm("b", "6"), cm("new", "11")];
    t.lw.resourceVersion = "11";
    await t.clock.advance(800);
    assert.equal(t.lw.of("list").length, 2, "relisted after the backoff");
    assert.equal(t.lw.of("watch").length, 2, "one watch per list, no rewatch loop");
    assert.ok(t.store.getByKey("ns/new"), "the store follows the server through lists");
    const refusal = t.errors.find((e) => e.error instanceof RequestRefusedError);
    assert.ok(refusal, "reported as a refusal");
    assert.equal(refusal.phase, "watch");
    assert.match(
      (refusal.error as Error).message,
      /^forbidden: cannot watch configmaps in namespace ns/,
    );
  } finally {
    await t.stop();
  }
});

test("a streaming list answered 404 or 403 is reported as what it is, and streaming lists stay on for the server", async () => {
  const features: ServerFeatures = {};
  const t = await setup({ useStreamingList: true }, undefined, (lw) => {
    lw.features = features;
    lw.onWatch = (o) => {
      if (o.sendInitialEvents) {
        throw new KubeStatusError({ code: 404, request: "GET /api/v1/configmapz" });
      }
      return events([], o);
    };
  });
  try {
    await t.reflector.synced; // one plain LIST at once
    assert.equal(features.streamingList, undefined, "nothing learnt about the server");
    assert.ok(!t.errors.some((e) => e.error instanceof StreamingListUnsupportedError));
    const refusal = t.errors.find((e) => e.error instanceof RequestRefusedError);
    assert.equal(refusal?.phase, "list", "a streaming list is labelled as the list it is");
    assert.match(String((refusal?.error as Error).message), /^configmapz not found in v1/);
  } finally {
    await t.stop();
  }
});
