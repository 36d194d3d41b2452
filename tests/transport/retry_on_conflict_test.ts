import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeConflictError } from "../../src/api/kube_conflict_error.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceClient } from "../../src/transport/resource_client.ts";
import { retryOnConflict } from "../../src/transport/retry_on_conflict.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";

const conflict = () => new KubeConflictError({ code: 409, status: { reason: "Conflict" } });

/** Lets pending promise reactions run (no timers involved). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test("retryOnConflict re-runs fn after a conflict, after a jittered pause on the clock", async () => {
  const clock = new ManualClock();
  const calls: number[] = [];
  const result = retryOnConflict(({ attempt }) => {
    calls.push(attempt);
    if (attempt < 3) throw conflict();
    return "done";
  }, { clock, random: () => 1 });
  await settle();
  assert.deepEqual(calls, [1]);
  await clock.advance(10);
  assert.deepEqual(calls, [1], "10 ms plus up to 10% jitter: not yet");
  await clock.advance(1);
  assert.deepEqual(calls, [1, 2]);
  await clock.advance(11);
  assert.deepEqual(calls, [1, 2, 3]);
  assert.equal(await result, "done");
  assert.equal(clock.pendingTimers, 0);
});

test("retryOnConflict grows the pause by factor up to capMs", async () => {
  const clock = new ManualClock();
  const at: number[] = [];
  const done = retryOnConflict(() => {
    at.push(clock.now());
    throw conflict();
  }, { clock, attempts: 5, random: () => 0, backoff: { initialMs: 100, factor: 3, capMs: 500 } })
    .catch((e) => e);
  await clock.advance(10_000);
  assert.ok(await done instanceof KubeConflictError);
  assert.deepEqual(at, [0, 100, 400, 900, 1400]);
});

test("retryOnConflict gives up after `attempts` calls with the last conflict", async () => {
  const clock = new ManualClock();
  const errors: KubeConflictError[] = [];
  let calls = 0;
  const done = retryOnConflict(() => {
    calls++;
    const err = conflict();
    errors.push(err);
    throw err;
  }, { attempts: 3, clock }).catch((e) => e);
  await clock.advance(1_000);
  assert.equal(await done, errors[2]);
  assert.equal(calls, 3);
  assert.equal(clock.pendingTimers, 0);
});

test("retryOnConflict does not retry a 500, a 404, AlreadyExists or a plain error", async () => {
  const clock = new ManualClock();
  for (
    const err of [
      new KubeStatusError({ code: 500 }),
      new KubeStatusError({ code: 404, status: { reason: "NotFound" } }),
      new KubeStatusError({ code: 409, status: { reason: "AlreadyExists" } }),
      new TypeError("bug"),
    ]
  ) {
    let calls = 0;
    const got = await retryOnConflict(() => {
      calls++;
      throw err;
    }, { clock }).catch((e) => e);
    assert.equal(got, err);
    assert.equal(calls, 1, `${err}`);
  }
  // a 409 that is not AlreadyExists counts, whatever class carries it
  let calls = 0;
  const ok = await retryOnConflict(() => {
    if (++calls === 1) throw new KubeStatusError({ code: 409 });
    return calls;
  }, { backoff: { initialMs: 0 } });
  assert.equal(ok, 2);
});

test("retryOnConflict stops at once when the signal aborts mid-pause, leaving no timer", async () => {
  const clock = new ManualClock();
  const ac = new AbortController();
  let calls = 0;
  const done = retryOnConflict(({ signal }) => {
    assert.equal(signal, ac.signal, "fn gets the signal");
    calls++;
    throw conflict();
  }, { clock, signal: ac.signal }).catch((e) => e);
  await settle();
  assert.equal(clock.pendingTimers, 1);
  const reason = new Error("shutting down");
  ac.abort(reason);
  assert.equal(await done, reason);
  assert.equal(calls, 1);
  assert.equal(clock.pendingTimers, 0);

  let called = false;
  await assert.rejects(
    retryOnConflict(() => called = true, { signal: AbortSignal.abort(reason) }),
    (e) => e === reason,
  );
  assert.equal(called, false, "an aborted signal: fn never runs");
});

test("retryOnConflict rejects bad options before calling fn", async () => {
  let called = false;
  const fn = () => called = true;
  for (const attempts of [0, 1.5, -1, Infinity]) {
    await assert.rejects(retryOnConflict(fn, { attempts }), RangeError);
  }
  await assert.rejects(retryOnConflict(fn, { backoff: { factor: 0.5 } }), RangeError);
  await assert.rejects(retryOnConflict(fn, { backoff: { initialMs: NaN } }), RangeError);
  await assert.rejects(retryOnConflict(fn, { backoff: { jitter: -1 } }), RangeError);
  await assert.rejects(retryOnConflict(fn, { backoff: { initialMs: 50, capMs: 10 } }), RangeError);
  // deno-lint-ignore no-explicit-any
  await assert.rejects(retryOnConflict("fn" as any), TypeError);
  assert.equal(called, false);
});

test("retryOnConflict over HTTP: two 409s from the server, then the replace lands", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a", namespace: "fx" },
    });
    const cms = resourceClient(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    });
    server.inject({ verb: "update", times: 2, fault: { kind: "status", code: 409 } });
    const saved = await retryOnConflict(async () => {
      const current = await cms.get("a");
      return await cms.replace({ ...current, data: { k: "v" } });
    }, { backoff: { initialMs: 0 } });
    assert.deepEqual(saved.data, { k: "v" });
    assert.deepEqual(
      server.requests.filter((r) => r.verb === "update").map((r) => r.status),
      [409, 409, 200],
    );
  } finally {
    await server.close();
  }
});
