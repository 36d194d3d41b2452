import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { WorkQueue } from "../../src/workqueue/work_queue.ts";
import type { MetricsProvider } from "../../src/metrics/reflector_metrics.ts";
import { ManualClock } from "../../src/testkit/manual_clock.ts";

/** Whether `p` has settled once ready work has run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => done = true, () => done = true);
  await new Promise((r) => setTimeout(r, 0));
  return done;
}

test("work queue hands out a key added three times once", async () => {
  const q = new WorkQueue();
  q.add("a");
  q.add("a");
  q.add("a");
  assert.equal(q.length, 1);
  assert.equal(await q.get(), "a");
  assert.equal(q.length, 0);
  q.done("a");
  const ac = new AbortController();
  const next = q.get({ signal: ac.signal });
  assert.equal(await settled(next), false, "nothing more to hand out");
  ac.abort(new Error("enough"));
  await assert.rejects(next, /enough/);
  q.shutdown();
});

test("work queue: a key added twice in one tick while a worker waits is handed out once", async () => {
  const q = new WorkQueue();
  const got = q.get(); // a worker waiting on an empty queue
  q.add("a"); // an update handler adds the old object's key...
  q.add("a"); // ...and the new one's, in the same tick
  assert.equal(await got, "a");
  q.done("a");
  assert.equal(q.length, 0, "the second add was a duplicate, not a second reconcile");
  // A key added after the worker took it is handed out again, after done.
  const next = q.get();
  q.add("b");
  assert.equal(await next, "b");
  q.add("b");
  assert.equal(q.length, 0, "in progress: not handed out meanwhile");
  q.done("b");
  assert.equal(q.length, 1);
  q.shutdown();
});

test("work queue hands out keys in the order they were first added", async () => {
  const q = new WorkQueue();
  for (const k of ["b", "a", "b", "c", "a"]) q.add(k);
  const got = [await q.get(), await q.get(), await q.get()];
  assert.deepEqual(got, ["b", "a", "c"]);
  q.shutdown();
});

test("work queue requeues a key added while in progress only after done, never handing it out twice at once", async () => {
  const q = new WorkQueue();
  q.add("a");
  assert.equal(await q.get(), "a");
  q.add("a"); // changed while a worker holds it
  q.add("a");
  assert.equal(q.length, 0, "not queued while in progress");
  const second = q.get();
  assert.equal(await settled(second), false, "a second worker does not get it meanwhile");
  q.add("b");
  assert.equal(await second, "b", "other keys are handed out meanwhile");
  const third = q.get();
  assert.equal(await settled(third), false);
  q.done("a");
  assert.equal(await third, "a", "handled again once done");
  q.done("a");
  q.done("b");
  assert.equal(q.length, 0, "once, however often it was re-added");
  q.shutdown();
});

test("work queue backs a failing key off exponentially up to the cap, and forget resets it", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock, baseDelayMs: 10, maxDelayMs: 50 });
  const delays: number[] = [];
  for (let i = 0; i < 6; i++) {
    q.addRateLimited("a");
    delays.push(clock.nextTimerAt! - clock.now());
    await clock.advance(delays.at(-1)! - 1);
    assert.equal(q.length, 0, "not before its delay");
    await clock.advance(1);
    assert.equal(q.length, 1);
    assert.equal(await q.get(), "a");
    q.done("a");
  }
  assert.deepEqual(delays, [10, 20, 40, 50, 50, 50]);
  assert.equal(q.numRequeues("a"), 6);
  q.forget("a");
  assert.equal(q.numRequeues("a"), 0);
  q.addRateLimited("a");
  assert.equal(clock.nextTimerAt! - clock.now(), 10, "starts again from the base delay");
  q.shutdown();
  assert.equal(clock.pendingTimers, 0, "shutdown cancels delayed adds");
});

/** Fails `key` `n` times in a row (each time: addRateLimited, wait, get, done); returns the delays. */
async function failRepeatedly(q: WorkQueue, clock: ManualClock, key: string, n: number) {
  const delays: number[] = [];
  for (let i = 0; i < n; i++) {
    q.addRateLimited(key);
    delays.push(clock.nextTimerAt! - clock.now());
    await clock.advance(delays.at(-1)!);
    assert.equal(await q.get(), key);
    q.done(key);
  }
  return delays;
}

test("work queue defaults to client-go's backoff: 5 ms doubling, capped at 1000 s", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock });
  const delays = await failRepeatedly(q, clock, "a", 20);
  assert.deepEqual(delays.slice(0, 4), [5, 10, 20, 40]);
  assert.equal(delays[17], 5 * 2 ** 17);
  assert.deepEqual(delays.slice(18), [1_000_000, 1_000_000]);
  q.shutdown();
});

test("work queue backoff is per key", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock });
  await failRepeatedly(q, clock, "a", 3);
  assert.deepEqual(await failRepeatedly(q, clock, "b", 1), [5]);
  assert.deepEqual(await failRepeatedly(q, clock, "a", 1), [40]);
  q.shutdown();
});

test("work queue limits the overall rate of rate-limited adds with a token bucket", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock, baseDelayMs: 1, qps: 10, burst: 2 });
  for (const k of ["a", "b", "c", "d", "e"]) q.addRateLimited(k);
  // a and b spend the burst (1 ms, their own backoff); then one every 100 ms
  await clock.advance(1);
  assert.equal(q.length, 2);
  await clock.advance(98);
  assert.equal(q.length, 2);
  await clock.advance(1);
  assert.equal(q.length, 3, "c at 100 ms");
  await clock.advance(100);
  assert.equal(q.length, 4, "d at 200 ms");
  await clock.advance(100);
  assert.equal(q.length, 5, "e at 300 ms");
  // idle for a second: the bucket refills up to its burst, no further
  await clock.advance(1_000);
  for (const k of ["f", "g", "h"]) q.addRateLimited(k);
  await clock.advance(1);
  assert.equal(q.length, 7);
  await clock.advance(99);
  assert.equal(q.length, 8);
  q.shutdown();
});

test("work queue addAfter adds the key once its delay has passed; the earlier of two times wins", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock });
  q.addAfter("a", 1_000);
  await clock.advance(999);
  assert.equal(q.length, 0);
  await clock.advance(1);
  assert.equal(q.length, 1);
  assert.equal(await q.get(), "a");
  q.done("a");
  q.addAfter("b", 500);
  q.addAfter("b", 2_000); // later: ignored
  q.addAfter("b", 100); // earlier: wins
  assert.equal(clock.pendingTimers, 1);
  await clock.advance(100);
  assert.equal(q.length, 1);
  await clock.advance(5_000);
  assert.equal(q.length, 1, "added once");
  q.addAfter("c", 0);
  q.addAfter("d", -5);
  assert.equal(q.length, 3, "no delay: added at once");
  assert.throws(() => q.addAfter("e", NaN), RangeError);
  q.shutdown();
});

test("work queue shutdown ends waiting gets, ignores adds, and still hands out keys already queued", async () => {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock });
  const waiting = [q.get(), q.get()];
  q.shutdown();
  assert.deepEqual(await Promise.all(waiting), [undefined, undefined]);
  assert.equal(q.shuttingDown, true);
  q.add("a");
  q.addAfter("b", 10);
  q.addRateLimited("c");
  assert.equal(q.length, 0);
  assert.equal(clock.pendingTimers, 0);
  assert.equal(await q.get(), undefined);

  const q2 = new WorkQueue({ clock });
  q2.add("x");
  q2.addAfter("y", 10);
  q2.shutdown();
  assert.equal(clock.pendingTimers, 0, "delayed adds are cancelled");
  assert.equal(await q2.get(), "x");
  assert.equal(await q2.get(), undefined);
});

test("work queue get rejects with the signal's reason and takes no key", async () => {
  const q = new WorkQueue();
  const ac = new AbortController();
  ac.abort(new Error("gone"));
  q.add("a");
  await assert.rejects(q.get({ signal: ac.signal }), /gone/);
  assert.equal(q.length, 1, "the key stays queued");
  const ac2 = new AbortController();
  assert.equal(await q.get({ signal: ac2.signal }), "a");
  q.shutdown();
});

test("work queue shutDownWithDrain waits until every key in progress is done", async () => {
  const q = new WorkQueue();
  q.add("a");
  q.add("b");
  assert.equal(await q.get(), "a");
  assert.equal(await q.get(), "b");
  const drained = q.shutDownWithDrain();
  assert.equal(await settled(drained), false);
  q.add("a"); // ignored: shutting down
  q.done("a");
  assert.equal(await settled(drained), false, "b is still in progress");
  q.done("b");
  await drained;
  assert.equal(await q.get(), undefined);

  const q2 = new WorkQueue();
  q2.add("a");
  await q2.get();
  const ac = new AbortController();
  const abandoned = q2.shutDownWithDrain({ signal: ac.signal });
  ac.abort(new Error("no more waiting"));
  await assert.rejects(abandoned, /no more waiting/);
  assert.equal(q2.shuttingDown, true);
  await new WorkQueue().shutDownWithDrain(); // nothing in progress: at once
});

test("work queue reports depth, adds, retries, queue and work durations, and disposes on shutdown", async () => {
  const calls: string[] = [];
  const metrics: MetricsProvider = {
    reflector: () => ({ dispose() {} }),
    workqueue: (name) => ({
      depth: (d) => void calls.push(`${name} depth ${d}`),
      add: () => void calls.push("add"),
      retry: () => void calls.push("retry"),
      queueDuration: ({ durationMs }) => void calls.push(`queued ${durationMs}`),
      workDuration: ({ durationMs }) => void calls.push(`worked ${durationMs}`),
      dispose: () => void calls.push("dispose"),
    }),
  };
  const clock = new ManualClock();
  const q = new WorkQueue({ name: "q", metrics, clock });
  q.add("a");
  q.add("a"); // a duplicate is not an add
  await clock.advance(30);
  await q.get();
  await clock.advance(70);
  q.done("a");
  q.addRateLimited("a");
  await clock.advance(5);
  q.shutdown();
  q.add("b");
  q.shutdown();
  assert.deepEqual(calls, [
    "add",
    "q depth 1",
    "queued 30",
    "q depth 0",
    "worked 70",
    "retry",
    "add",
    "q depth 1",
    "dispose",
  ]);
  // noopMetrics (the default) has workqueue(), and a provider without it is fine
  new WorkQueue({ metrics: { reflector: () => ({ dispose() {} }) } }).add("x");
});

test("work queue options are checked at construction", () => {
  assert.throws(() => new WorkQueue({ name: "" }), TypeError);
  assert.throws(() => new WorkQueue({ clock: {} as never }), TypeError);
  assert.throws(() => new WorkQueue({ metrics: {} as never }), TypeError);
  assert.throws(() => new WorkQueue({ baseDelayMs: 0 }), RangeError);
  assert.throws(() => new WorkQueue({ baseDelayMs: 10, maxDelayMs: 5 }), RangeError);
  assert.throws(() => new WorkQueue({ maxDelayMs: Infinity }), RangeError);
  assert.throws(() => new WorkQueue({ qps: 0 }), RangeError);
  assert.throws(() => new WorkQueue({ burst: 0.5 }), RangeError);
  assert.equal(new WorkQueue().name, "workqueue");
});
