/**
 * EventRecorder against the test API server, on a manual clock (Event
 * times and windows come from it; retries wait on it).
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { EventRecorder } from "../../src/events/event_recorder.ts";
import { EventRecordError } from "../../src/events/event_record_error.ts";
import type { EventRecorderOptions } from "../../src/events/event_recorder_options.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

const POD = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "prod",
    uid: "u-1",
    resourceVersion: "7",
    labels: { secret: "s3cr3t-label" },
  },
  spec: { token: "s3cr3t-spec" },
};

async function setup(options: Partial<EventRecorderOptions> = {}) {
  const server = await FakeApiServer.start();
  const clock = new ManualClock(START);
  const errors: EventRecordError[] = [];
  const recorder = new EventRecorder({
    client: new KubeClient({ server: server.url }),
    component: "example.com/ctl",
    instance: "ctl-0",
    clock,
    random: () => 0,
    onError: (err) => errors.push(err),
    ...options,
  });
  const v1Events = () => server.objects({ resource: "events", group: "events.k8s.io" });
  const coreEvents = () => server.objects({ resource: "events", group: "" });
  /** Waits (by condition) until a failed write waits on the clock to retry (its request timer, 30 s away, is gone). */
  const retryArmed = async () => {
    const armed = () => clock.pendingTimers === 1 && clock.nextTimerAt === clock.now() + 1_000;
    for (let i = 0; i < 5_000 && !armed(); i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(armed(), `${clock.pendingTimers} timers, next at ${clock.nextTimerAt}`);
  };
  const close = async () => {
    await recorder.close();
    await server.close();
  };
  return { server, clock, errors, recorder, v1Events, coreEvents, retryArmed, close };
}

const series = (e: KubeObject) =>
  e.series as { count: number; lastObservedTime: string } | undefined;

test("EventRecorder: an event creates an events.k8s.io/v1 Event regarding the object in its namespace", async () => {
  const t = await setup();
  try {
    t.recorder.event(POD, { type: "Normal", reason: "Started", message: "container started" });
    assert.equal(t.recorder.pending, 1);
    await t.recorder.flush();
    const [e, ...more] = t.v1Events();
    assert.equal(more.length, 0);
    assert.equal(e.metadata.namespace, "prod");
    assert.match(e.metadata.name ?? "", /^web\.[0-9a-f]{16}$/);
    assert.deepEqual(e.regarding, {
      apiVersion: "v1",
      kind: "Pod",
      name: "web",
      namespace: "prod",
      uid: "u-1",
      resourceVersion: "7",
    });
    assert.equal(e.type, "Normal");
    assert.equal(e.reason, "Started");
    assert.equal(e.action, "Started");
    assert.equal(e.note, "container started");
    assert.equal(e.reportingController, "example.com/ctl");
    assert.equal(e.reportingInstance, "ctl-0");
    assert.equal(e.eventTime, "2026-12-06T00:00:00.000000Z");
    assert.equal(series(e), undefined);
    assert.equal(t.coreEvents().length, 0);
    assert.deepEqual(t.recorder.stats, {
      written: 1,
      updated: 0,
      dropped: 0,
      droppedBy: { rateLimited: 0, queueFull: 0, refused: 0, unreachable: 0, closed: 0 },
    });
    assert.equal(t.recorder.pending, 0);
    assert.equal(t.recorder.api, "events.k8s.io/v1");
  } finally {
    await t.close();
  }
});

test("EventRecorder: an event about a cluster-scoped object goes to the default namespace", async () => {
  const t = await setup();
  try {
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "prod" } };
    t.recorder.event(ns, {
      type: "Warning",
      reason: "Stuck",
      message: "finalizers",
      action: "Delete",
    });
    await t.recorder.flush();
    const [e] = t.v1Events();
    assert.equal(e.metadata.namespace, "default");
    assert.deepEqual(e.regarding, { apiVersion: "v1", kind: "Namespace", name: "prod" });
    assert.equal(e.action, "Delete");
  } finally {
    await t.close();
  }
});

test("EventRecorder: three identical events make one Event whose series counts 3 (patched), with the last time observed", async () => {
  const t = await setup();
  try {
    for (let i = 0; i < 3; i++) {
      t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "restarting" });
      await t.recorder.flush();
      await t.clock.advance(1_000);
    }
    const events = t.v1Events();
    assert.equal(events.length, 1);
    assert.deepEqual(series(events[0]), {
      count: 3,
      lastObservedTime: "2026-12-06T00:00:02.000000Z",
    });
    assert.equal(events[0].eventTime, "2026-12-06T00:00:00.000000Z");
    const patches = t.server.requests.filter((r) => r.verb === "patch");
    assert.equal(patches.length, 2);
    assert.deepEqual(
      [t.recorder.stats.written, t.recorder.stats.updated, t.recorder.stats.dropped],
      [1, 2, 0],
    );
  } finally {
    await t.close();
  }
});

test("EventRecorder: identical events recorded together are written once, with the count they reached", async () => {
  const t = await setup();
  try {
    for (let i = 0; i < 3; i++) {
      t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "x" });
    }
    assert.equal(t.recorder.pending, 1);
    await t.recorder.flush();
    const events = t.v1Events();
    assert.equal(events.length, 1);
    assert.equal(series(events[0])?.count, 3);
    assert.equal(t.server.requests.filter((r) => r.verb === "create").length, 1);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a different message, reason or type makes another Event", async () => {
  const t = await setup();
  try {
    t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "a" });
    t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "b" });
    t.recorder.event(POD, { type: "Warning", reason: "Other", message: "a" });
    t.recorder.event(POD, { type: "Normal", reason: "BackOff", message: "a" });
    t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "a" });
    await t.recorder.flush();
    const events = t.v1Events();
    assert.equal(events.length, 4);
    assert.equal(new Set(events.map((e) => e.metadata.name)).size, 4);
    assert.deepEqual(events.map((e) => series(e)?.count ?? 1).sort(), [1, 1, 1, 2]);
  } finally {
    await t.close();
  }
});

test("EventRecorder: past the object's burst of 25, events are dropped and counted; one comes back every 5 minutes", async () => {
  const t = await setup();
  try {
    for (let i = 0; i < 30; i++) {
      t.recorder.event(POD, { type: "Normal", reason: "Tick", message: `${i}` });
    }
    const other = { ...POD, metadata: { ...POD.metadata, name: "api", uid: "u-2" } };
    t.recorder.event(other, { type: "Normal", reason: "Tick", message: "other object" });
    await t.recorder.flush();
    assert.equal(t.v1Events().length, 26);
    assert.equal(t.recorder.stats.dropped, 5);
    assert.equal(t.recorder.stats.droppedBy.rateLimited, 5);
    await t.clock.advance(299_000);
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "early" });
    await t.clock.advance(1_000);
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "refilled" });
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "again" });
    await t.recorder.flush();
    assert.deepEqual(
      t.v1Events().filter((e) => ["early", "refilled", "again"].includes(e.note as string)).map((
        e,
      ) => e.note),
      ["refilled"],
    );
    assert.equal(t.recorder.stats.droppedBy.rateLimited, 7);
    assert.equal(t.errors.length, 0, "rate limiting is not an error");
  } finally {
    await t.close();
  }
});

test("EventRecorder: an identical event after the 10-minute window creates a new Event", async () => {
  const t = await setup();
  try {
    const details = { type: "Warning", reason: "BackOff", message: "x" } as const;
    t.recorder.event(POD, details);
    await t.recorder.flush();
    await t.clock.advance(600_000);
    t.recorder.event(POD, details); // at the edge: joins
    await t.recorder.flush();
    await t.clock.advance(600_001);
    t.recorder.event(POD, details);
    await t.recorder.flush();
    const events = t.v1Events().sort((a, b) =>
      String(a.eventTime).localeCompare(String(b.eventTime))
    );
    assert.equal(events.length, 2);
    assert.equal(series(events[0])?.count, 2);
    assert.equal(series(events[1]), undefined);
    assert.equal(events[1].eventTime, "2026-12-06T00:20:00.001000Z");
  } finally {
    await t.close();
  }
});

test("EventRecorder: where events.k8s.io/v1 is not served (404 on the collection), core v1 Events are written, and the recorder remembers", async () => {
  const t = await setup();
  try {
    t.server.inject({
      verb: "create",
      resource: "events",
      fault: { kind: "status", code: 404, body: "text", message: "404 page not found" },
    });
    for (let i = 0; i < 3; i++) {
      t.recorder.event(POD, { type: "Warning", reason: "BackOff", message: "restarting" });
      await t.recorder.flush();
      await t.clock.advance(1_000);
    }
    t.recorder.event(POD, { type: "Normal", reason: "Other", message: "second" });
    await t.recorder.flush();
    assert.equal(t.recorder.api, "v1");
    assert.equal(t.v1Events().length, 0);
    const events = t.coreEvents().sort((a, b) => String(a.reason).localeCompare(String(b.reason)));
    assert.equal(events.length, 2);
    const [e] = events;
    assert.equal(e.count, 3);
    assert.equal(e.firstTimestamp, "2026-12-06T00:00:00Z");
    assert.equal(e.lastTimestamp, "2026-12-06T00:00:02Z");
    assert.equal(e.message, "restarting");
    assert.deepEqual(e.source, { component: "example.com/ctl", host: "ctl-0" });
    assert.equal((e.involvedObject as { uid: string }).uid, "u-1");
    const toGroup = t.server.requests.filter((r) => r.path.startsWith("/apis/events.k8s.io/"));
    assert.equal(toGroup.length, 1, "events.k8s.io/v1 is tried once");
    assert.equal(t.recorder.stats.dropped, 0);
    assert.equal(t.errors.length, 0);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a 404 because the namespace is missing is a refusal, not a reason to fall back", async () => {
  const server = await FakeApiServer.start();
  // the real server's answer to a create in a namespace that does not exist
  const missingNamespace: typeof fetch = (input, init) =>
    init?.method === "POST"
      ? Promise.resolve(
        new Response(
          JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            message: 'namespaces "prod" not found',
            reason: "NotFound",
            details: { name: "prod", kind: "namespaces" },
            code: 404,
          }),
          { status: 404, headers: { "Content-Type": "application/json" } },
        ),
      )
      : fetch(input, init);
  const errors: EventRecordError[] = [];
  const recorder = new EventRecorder({
    client: new KubeClient({ server: server.url, fetch: missingNamespace }),
    component: "ctl",
    clock: new ManualClock(START),
    onError: (err) => errors.push(err),
  });
  try {
    recorder.event(POD, { type: "Normal", reason: "A", message: "a" });
    await recorder.flush();
    assert.equal(recorder.api, "events.k8s.io/v1");
    assert.equal(recorder.stats.droppedBy.refused, 1);
    assert.equal(errors[0]?.dropReason, "refused");
  } finally {
    await recorder.close();
    await server.close();
  }
});

test("EventRecorder: a 403 drops the event, counts it and reports it without the object's data; nothing throws or rejects", async () => {
  const t = await setup();
  try {
    t.server.inject({
      verb: "create",
      resource: "events",
      times: Infinity,
      fault: { kind: "status", code: 403 },
    });
    assert.doesNotThrow(() =>
      t.recorder.event(POD, { type: "Warning", reason: "Failed", message: "no image" })
    );
    await t.recorder.flush();
    assert.deepEqual(t.recorder.stats.droppedBy, {
      rateLimited: 0,
      queueFull: 0,
      refused: 1,
      unreachable: 0,
      closed: 0,
    });
    assert.equal(t.recorder.stats.written, 0);
    assert.equal(
      t.server.requests.filter((r) => r.verb === "create").length,
      1,
      "a 403 is not retried",
    );
    assert.equal(t.errors.length, 1);
    const [err] = t.errors;
    assert.ok(err instanceof EventRecordError);
    assert.equal(err.dropReason, "refused");
    assert.deepEqual(err.regarding, { kind: "Pod", namespace: "prod", name: "web" });
    assert.equal(err.eventReason, "Failed");
    assert.ok(err.cause instanceof KubeStatusError && err.cause.code === 403);
    assert.match(
      err.message,
      /Warning event Failed about Pod prod\/web dropped \(refused\): HTTP 403/,
    );
    for (const secret of ["s3cr3t", "no image", "u-1"]) {
      assert.ok(!err.message.includes(secret), err.message);
    }
    // the recorder goes on: the next event is tried again
    t.recorder.event(POD, { type: "Warning", reason: "Failed", message: "no image" });
    await t.recorder.flush();
    assert.equal(t.recorder.stats.droppedBy.refused, 2);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a 5xx is retried once after retryDelayMs; twice is a drop", async () => {
  const t = await setup();
  try {
    t.server.inject({ verb: "create", resource: "events", fault: { kind: "status", code: 503 } });
    t.recorder.event(POD, { type: "Normal", reason: "A", message: "a" });
    await t.retryArmed();
    await t.clock.advance(1_000);
    await t.recorder.flush();
    assert.equal(t.v1Events().length, 1);
    assert.equal(t.recorder.stats.dropped, 0);

    t.server.inject({
      verb: "create",
      resource: "events",
      times: 2,
      fault: { kind: "status", code: 500 },
    });
    t.recorder.event(POD, { type: "Normal", reason: "B", message: "b" });
    await t.retryArmed();
    await t.clock.advance(1_000);
    await t.recorder.flush();
    assert.equal(t.v1Events().length, 1);
    assert.equal(t.recorder.stats.droppedBy.refused, 1);
    assert.equal(t.errors.length, 1);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a network error is retried once; twice is dropped as unreachable", async () => {
  const t = await setup();
  try {
    t.server.inject({ verb: "create", resource: "events", times: 2, fault: { kind: "reset" } });
    t.recorder.event(POD, { type: "Normal", reason: "A", message: "a" });
    await t.retryArmed();
    await t.clock.advance(1_000);
    await t.recorder.flush();
    assert.equal(t.v1Events().length, 0);
    assert.equal(t.recorder.stats.droppedBy.unreachable, 1);
    assert.ok(t.errors[0]?.cause instanceof KubeNetworkError, `${t.errors[0]}`);
    assert.equal(t.errors[0].dropReason, "unreachable");
  } finally {
    await t.close();
  }
});

test("EventRecorder: beyond maxPending waiting writes, events are dropped and counted", async () => {
  const t = await setup({ maxPending: 2 });
  try {
    for (let i = 0; i < 5; i++) {
      t.recorder.event(POD, { type: "Normal", reason: "Tick", message: `${i}` });
    }
    // a repeat of a waiting one joins it: no room needed
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "0" });
    assert.equal(t.recorder.pending, 2);
    await t.recorder.flush();
    assert.deepEqual(t.v1Events().map((e) => [e.note, series(e)?.count ?? 1]).sort(), [["0", 2], [
      "1",
      1,
    ]]);
    assert.equal(t.recorder.stats.droppedBy.queueFull, 3);
    assert.equal(t.recorder.stats.dropped, 3);
    // room again once written
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "later" });
    await t.recorder.flush();
    assert.equal(t.v1Events().length, 3);
  } finally {
    await t.close();
  }
});

test("EventRecorder: close() waits for what is pending; events after it are dropped as closed and sent nowhere", async () => {
  const t = await setup();
  try {
    for (let i = 0; i < 3; i++) {
      t.recorder.event(POD, { type: "Normal", reason: "Tick", message: `${i}` });
    }
    await t.recorder.close();
    assert.equal(t.v1Events().length, 3);
    assert.equal(t.recorder.pending, 0);
    const before = t.server.requestCount;
    t.recorder.event(POD, { type: "Normal", reason: "Tick", message: "late" });
    await t.recorder.close();
    assert.equal(t.server.requestCount, before);
    assert.equal(t.recorder.stats.droppedBy.closed, 1);
    assert.throws(() => t.recorder.event(POD, { type: "Bad" as "Normal", reason: "R" }), TypeError);
  } finally {
    await t.close();
  }
});

test("EventRecorder: close() with an aborted signal cuts a write waiting to retry and drops what waits as closed", async () => {
  const t = await setup();
  try {
    t.server.inject({
      verb: "create",
      resource: "events",
      times: Infinity,
      fault: { kind: "status", code: 503 },
    });
    for (let i = 0; i < 3; i++) {
      t.recorder.event(POD, { type: "Normal", reason: "Tick", message: `${i}` });
    }
    await t.retryArmed(); // the first write waits to retry
    const ac = new AbortController();
    const closing = t.recorder.close({ signal: ac.signal });
    ac.abort();
    await closing;
    assert.equal(t.recorder.stats.droppedBy.closed, 3);
    assert.equal(t.errors.length, 0);
    assert.equal(t.clock.pendingTimers, 0);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a patch of an Event deleted meanwhile (404) creates a new Event carrying the series", async () => {
  const t = await setup();
  try {
    const details = { type: "Warning", reason: "BackOff", message: "x" } as const;
    t.recorder.event(POD, details);
    await t.recorder.flush();
    const [first] = t.v1Events();
    t.server.delete(first); // expired
    await t.clock.advance(1_000);
    t.recorder.event(POD, details);
    await t.recorder.flush();
    const events = t.v1Events();
    assert.equal(events.length, 1);
    assert.notEqual(events[0].metadata.name, first.metadata.name);
    assert.equal(series(events[0])?.count, 2);
    // and the series goes on under the new name
    t.recorder.event(POD, details);
    await t.recorder.flush();
    assert.equal(series(t.v1Events()[0])?.count, 3);
    assert.deepEqual(
      [t.recorder.stats.written, t.recorder.stats.updated, t.recorder.stats.dropped],
      [2, 1, 0],
    );
  } finally {
    await t.close();
  }
});

test("EventRecorder: a malformed call throws a TypeError at once and sends nothing", async () => {
  const t = await setup();
  try {
    const list = { metadata: { name: "web", namespace: "prod" } }; // a list item: no kind
    assert.throws(() => t.recorder.event(list, { type: "Normal", reason: "R" }), TypeError);
    assert.throws(() => t.recorder.event(POD, { type: "Normal" } as never), TypeError);
    assert.throws(
      () => t.recorder.event(POD, { type: "Info" as "Normal", reason: "R" }),
      TypeError,
    );
    await t.recorder.flush();
    assert.equal(t.server.requestCount, 0);
    assert.equal(t.recorder.stats.dropped, 0);
  } finally {
    await t.close();
  }
});

test("EventRecorder: a message over 1 kB is cut to fit the API", async () => {
  const t = await setup();
  try {
    t.recorder.event(POD, { type: "Normal", reason: "Long", message: "y".repeat(5000) });
    await t.recorder.flush();
    const [e] = t.v1Events();
    assert.equal((e.note as string).length, 1024);
    assert.ok((e.note as string).endsWith(" ..."));
  } finally {
    await t.close();
  }
});
