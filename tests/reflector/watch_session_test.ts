import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeNetworkError, ShortWatchError, UnexpectedKindError } from "../../src/api/errors.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { RequestRefusedError } from "../../src/api/request_refused_error.ts";
import type { KubeObject } from "../../src/api/types.ts";
import {
  accept,
  type AcceptContext,
  close,
  open,
  type WatchPhase,
  type WatchSession,
} from "../../src/reflector/_watch_session.ts";

const ctx: AcceptContext<KubeObject> = { expectedKind: "ConfigMap", timeoutMs: 300_000 };
const watch = (rv: string): WatchPhase => ({ kind: "watch", rv, waited: false });
const stream = (rv: string): WatchPhase => ({ kind: "stream", rv, listRv: rv, failures: 0 });
const cm = (name: string, rv: string, kind = "ConfigMap"): KubeObject => ({
  apiVersion: "v1",
  kind,
  metadata: { name, namespace: "ns", resourceVersion: rv },
});
const ev = (type: string, object: unknown) => ({ type, object });
const bookmark = (rv: string, end = false) =>
  ev("BOOKMARK", {
    kind: "ConfigMap",
    metadata: {
      resourceVersion: rv,
      ...(end ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}),
    },
  });
const status = (code: number, reason: string) => ({ kind: "Status", code, reason });

/** Folds batches at the given times; returns every result. */
function fold(phase: WatchPhase, batches: Array<[number, unknown[]]>) {
  let s: WatchSession<KubeObject> = open(phase, 0);
  const results = [];
  for (const [now, batch] of batches) {
    const a = accept(s, batch, now, ctx);
    s = a.session;
    results.push(a);
  }
  return { session: s, results };
}

/** [name, phase, batches, what the last accept hands on, its rv, stop error class or undefined] */
type Row = [
  string,
  WatchPhase,
  Array<[number, unknown[]]>,
  string[],
  string,
  (new (...args: never[]) => Error) | undefined,
];

const describe = (events: ReturnType<typeof accept>["events"]) =>
  events.map((e) =>
    e.type === "LIST"
      ? `LIST ${e.items.map((i) => i.metadata?.name).join(",")}@${e.resourceVersion}`
      : e.type === "BOOKMARK"
      ? `BOOKMARK@${e.resourceVersion}`
      : `${e.type} ${e.object.metadata?.name}@${e.resourceVersion}`
  );

const rows: Row[] = [
  [
    "events are handed on in order with their versions",
    watch("5"),
    [[10, [ev("ADDED", cm("a", "6")), ev("MODIFIED", cm("a", "7")), ev("DELETED", cm("a", "8"))]]],
    ["ADDED a@6", "MODIFIED a@7", "DELETED a@8"],
    "8",
    undefined,
  ],
  [
    "a bookmark advances the version and touches nothing else",
    watch("5"),
    [[10, [bookmark("9")]]],
    ["BOOKMARK@9"],
    "9",
    undefined,
  ],
  [
    "an ERROR event stops the watch; what came before it is handed on",
    watch("5"),
    [[10, [
      ev("ADDED", cm("a", "6")),
      ev("ERROR", status(410, "Expired")),
      ev("ADDED", cm("b", "7")),
    ]]],
    ["ADDED a@6"],
    "6",
    KubeStatusError,
  ],
  [
    "a malformed event (no object) stops the watch",
    watch("5"),
    [[10, [ev("ADDED", cm("a", "6")), { type: "ADDED" }]]],
    ["ADDED a@6"],
    "6",
    MalformedResponseError,
  ],
  [
    "an unknown event type stops the watch",
    watch("5"),
    [[10, [ev("REPLACED", cm("a", "6"))]]],
    [],
    "",
    MalformedResponseError,
  ],
  [
    "an event without a resourceVersion stops the watch (a watch from it would miss changes)",
    watch("5"),
    [[10, [ev("ADDED", { kind: "ConfigMap", metadata: { name: "a" } })]]],
    [],
    "",
    MalformedResponseError,
  ],
  [
    "a resourceVersion that is not a string stops the watch",
    watch("5"),
    [[10, [ev("ADDED", { kind: "ConfigMap", metadata: { name: "a", resourceVersion: 6 } })]]],
    [],
    "",
    MalformedResponseError,
  ],
  [
    "an object of another kind is left out (reported), the watch goes on",
    watch("5"),
    [[10, [ev("ADDED", cm("s", "6", "Secret")), ev("ADDED", cm("a", "7"))]]],
    ["ADDED a@7"],
    "7",
    undefined,
  ],
  [
    "a streaming list hands on nothing until its end bookmark, then one LIST of the keyed snapshot",
    stream(""),
    [
      [10, [ev("ADDED", cm("a", "3")), ev("ADDED", cm("b", "4"))]],
      [20, [ev("MODIFIED", cm("a", "5")), ev("DELETED", cm("b", "6")), bookmark("6", true)]],
    ],
    ["LIST a@6"],
    "6",
    undefined,
  ],
  [
    "a streaming list's events after its end bookmark are a watch's",
    stream(""),
    [[10, [ev("ADDED", cm("a", "3")), bookmark("4", true), ev("ADDED", cm("b", "5"))]]],
    ["LIST a@4", "ADDED b@5"],
    "5",
    undefined,
  ],
  [
    "a bookmark without the end annotation during a streaming list only moves the version",
    stream(""),
    [[10, [ev("ADDED", cm("a", "3")), bookmark("4")]]],
    [],
    "",
    undefined,
  ],
];

for (const [name, phase, batches, handed, rv, stop] of rows) {
  test(`watch session: ${name}`, () => {
    const { results } = fold(phase, batches);
    const last = results.at(-1)!;
    assert.deepEqual(describe(last.events), handed);
    assert.equal(last.rv, rv);
    if (stop) assert.ok(last.stop instanceof stop, `stop is ${last.stop}`);
    else assert.equal(last.stop, undefined);
  });
}

test("watch session: an object of another kind is reported as an UnexpectedKindError", () => {
  const a = accept(open<KubeObject>(watch("5"), 0), [ev("ADDED", cm("s", "6", "Secret"))], 1, ctx);
  assert.equal(a.reports.length, 1);
  assert.ok(a.reports[0] instanceof UnexpectedKindError);
  assert.equal(a.seen, 1);
});

test("watch session: anything at all as a batch element never throws", () => {
  const junk = [null, 1, "x", [], { type: null }, { type: "ADDED", object: [] }, {
    type: "ADDED",
    object: { metadata: null },
  }];
  for (const item of junk) {
    const a = accept(open<KubeObject>(watch("5"), 0), [item], 1, ctx);
    assert.ok(a.stop instanceof MalformedResponseError, JSON.stringify(item));
    assert.deepEqual(a.events, []);
  }
});

test("watch session: periodic bookmarks are measured; the one just before the timeout is not", () => {
  const c = { ...ctx, timeoutMs: 300_000 };
  let s = open<KubeObject>(watch("5"), 0);
  let a = accept(s, [bookmark("6")], 60_000, c);
  assert.equal(a.bookmarkGapMs, undefined, "one bookmark is no interval");
  s = a.session;
  a = accept(s, [bookmark("7")], 120_000, c);
  assert.equal(a.bookmarkGapMs, 60_000);
  s = a.session;
  a = accept(s, [bookmark("8")], 298_000, c); // 2 s before the timeout
  assert.equal(a.bookmarkGapMs, undefined);
  assert.equal(a.session.established, true);
});

test("watch session: the end bookmark reports the streaming list's size and duration and restarts the watch's clock", () => {
  let s = open<KubeObject>(stream(""), 100);
  const a = accept(s, [ev("ADDED", cm("a", "3")), bookmark("4", true)], 350, ctx);
  assert.deepEqual(a.synced, { items: 1, durationMs: 250 });
  s = a.session;
  assert.equal(s.pending, undefined);
  assert.equal(s.watchStartedAt, 350);
  const closed = close(s, { applied: "4" }, 400, { shortWatchMs: 1_000 });
  assert.equal(closed.outcome.kind, "ended");
  assert.equal((closed.outcome as { synced?: boolean }).synced, true);
  assert.equal(closed.short, false, "a synced streaming list is not a short watch");
});

/** [name, phase, batches before the end, ending error, failure kind or "ended", report class, report phase] */
const closes: Array<
  [
    string,
    WatchPhase,
    unknown[],
    unknown,
    string,
    (new (...args: never[]) => Error) | undefined,
    string,
  ]
> = [
  [
    "a clean close after events",
    watch("5"),
    [ev("ADDED", cm("a", "6"))],
    undefined,
    "ended",
    undefined,
    "watch",
  ],
  [
    "a clean close at once with nothing: a short watch",
    watch("5"),
    [],
    undefined,
    "ended",
    ShortWatchError,
    "watch",
  ],
  [
    "a streaming list that ends before its end bookmark: reported as the list it is",
    stream(""),
    [ev("ADDED", cm("a", "3"))],
    undefined,
    "ended",
    MalformedResponseError,
    "list",
  ],
  [
    "a 410 ERROR event: expired",
    watch("5"),
    [],
    KubeStatusError.fromStatus(status(410, "Expired"), { request: "watch ERROR event" }),
    "expired",
    KubeStatusError,
    "watch",
  ],
  [
    "a 500 ERROR event: bad data (relist)",
    watch("5"),
    [],
    KubeStatusError.fromStatus(status(500, "InternalError"), { request: "watch ERROR event" }),
    "bad-data",
    KubeStatusError,
    "watch",
  ],
  [
    "a 403 on a watch: refused, reported naming the verb and resource",
    watch("5"),
    [],
    new KubeStatusError({ code: 403, request: "GET /api/v1/namespaces/team-b/configmaps" }),
    "refused",
    RequestRefusedError,
    "watch",
  ],
  [
    "a 404 on a streaming list: refused (not 'no streaming lists'), reported as a list",
    stream(""),
    [],
    new KubeStatusError({ code: 404, request: "GET /api/v1/configmapz" }),
    "refused",
    RequestRefusedError,
    "list",
  ],
  [
    "a 422 naming sendInitialEvents on a streaming list: unsupported",
    stream(""),
    [],
    new KubeStatusError({
      code: 422,
      request: "GET /api/v1/configmaps",
      status: {
        kind: "Status",
        apiVersion: "v1",
        code: 422,
        reason: "Invalid",
        details: { causes: [{ field: "sendInitialEvents", reason: "FieldValueForbidden" }] },
      },
    }),
    "unsupported",
    KubeStatusError,
    "list",
  ],
  [
    "a 429: answered (retried as a watch)",
    watch("5"),
    [],
    new KubeStatusError({ code: 429 }),
    "answered",
    KubeStatusError,
    "watch",
  ],
  [
    "a 503: answered (retried as a watch)",
    watch("5"),
    [],
    new KubeStatusError({ code: 503 }),
    "answered",
    KubeStatusError,
    "watch",
  ],
  [
    "a connection reset: no answer",
    watch("5"),
    [],
    new KubeNetworkError("GET /api/v1/configmaps", new Error("reset")),
    "no-answer",
    KubeNetworkError,
    "watch",
  ],
];

for (const [name, phase, batch, error, kind, reportClass, reportPhase] of closes) {
  test(`watch session close: ${name}`, () => {
    let s = open<KubeObject>(phase, 0);
    if (batch.length) s = accept(s, batch, 10, ctx).session;
    const closed = close(s, { error, applied: "5" }, 20, { shortWatchMs: 1_000 });
    const got = closed.outcome.kind === "failed" ? closed.outcome.failure : closed.outcome.kind;
    assert.equal(got, kind);
    assert.equal(closed.outcome.kind !== "listed" && closed.outcome.rv, "5");
    if (reportClass) assert.ok(closed.report instanceof reportClass, String(closed.report));
    else assert.equal(closed.report, undefined);
    assert.equal(closed.reportPhase, reportPhase);
  });
}

test("watch session close: a refused watch's report names the verb, resource and namespace", () => {
  const err = new KubeStatusError({
    code: 403,
    request: "GET /api/v1/namespaces/team-b/configmaps",
    status: {
      kind: "Status",
      apiVersion: "v1",
      code: 403,
      reason: "Forbidden",
      message:
        'configmaps is forbidden: User "x" cannot watch resource "configmaps" in API group "" in the namespace "team-b"',
    },
  });
  const closed = close(open(watch("5"), 0), { error: err, applied: "5" }, 5_000, {
    shortWatchMs: 1_000,
  });
  const report = closed.report as RequestRefusedError;
  assert.match(
    report.message,
    /^forbidden: cannot watch configmaps in namespace team-b \(403 Forbidden/,
  );
  assert.equal(report.verb, "watch");
  assert.equal(report.resource, "configmaps");
  assert.equal(report.namespace, "team-b");
  assert.equal(report.cause, err);
});

test("watch session close: a 404 of a grouped resource names the resource and the API version", () => {
  const err = new KubeStatusError({ code: 404, request: "GET /apis/apps/v9/deployments" });
  const closed = close(open(stream(""), 0), { error: err, applied: "" }, 5, {
    shortWatchMs: 1_000,
  });
  assert.match(
    (closed.report as Error).message,
    /^deployments\.apps not found in apps\/v9: cannot list it/,
  );
});

test("watch session close: Retry-After comes back with the outcome", () => {
  const err = new KubeStatusError({ code: 429, retryAfterMs: 7_000 });
  const closed = close(open(watch("5"), 0), { error: err, applied: "5" }, 5, {
    shortWatchMs: 1_000,
  });
  assert.equal(closed.retryAfterMs, 7_000);
});
