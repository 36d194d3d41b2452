/**
 * streamBudgetFetch with one long-lived caller signal (its listeners removed
 * on every path a request ends by) and a response dropped unread (still
 * collected and counted out: nothing holds the body handed on strongly).
 *
 * @module
 */
import assert from "node:assert/strict";
import { streamBudgetFetch } from "../../src/kubeconfig/_stream_budget_fetch.ts";
import { canForceGc, heapUsed } from "../metrics/_heap.ts";
import { test } from "../_test.ts";

/** A signal counting its 'abort' listeners (added minus removed, `once` ones that fired aside). */
function countedSignal() {
  const ac = new AbortController();
  const signal = ac.signal;
  const live = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener =
    ((type: string, fn: EventListenerOrEventListenerObject, o?: unknown) => {
      if (type === "abort") live.add(fn);
      add(type, fn, o as AddEventListenerOptions);
    }) as typeof signal.addEventListener;
  signal.removeEventListener =
    ((type: string, fn: EventListenerOrEventListenerObject, o?: unknown) => {
      if (type === "abort") live.delete(fn);
      remove(type, fn, o as EventListenerOptions);
    }) as typeof signal.removeEventListener;
  return { ac, signal, listeners: () => live.size };
}

/** A fake client answering each request with `answer()`. */
function budget(answer: () => Promise<Response>, gateFirst = true) {
  return streamBudgetFetch<number>({
    budget: 4,
    createClient: () => 0,
    send: () => answer(),
    closeClient: () => {},
    gateFirst,
  });
}

const text = (t: string) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(t));
      c.close();
    },
  });

test("one caller signal over many requests keeps no abort listener once each request has ended, on every path", async () => {
  const s = countedSignal();
  const answers: (() => Promise<Response>)[] = [
    () => Promise.resolve(new Response(text("read out"))), // read to its end
    () => Promise.resolve(new Response(text("cancelled"))), // cancelled
    () => Promise.resolve(new Response(null, { status: 204 })), // no body
    () => Promise.reject(new TypeError("connection refused")), // failed
    () =>
      Promise.resolve(
        new Response(
          new ReadableStream({ pull: (c) => c.error(new TypeError("reset")) }),
        ),
      ), // body errored
  ];
  let i = 0;
  const f = budget(() => answers[i % answers.length]());
  for (; i < 50; i++) {
    const kind = i % answers.length;
    const p = f.fetch("https://k/a", { signal: s.signal });
    if (kind === 3) {
      await assert.rejects(p);
      continue;
    }
    const res = await p;
    if (kind === 1) await res.body!.cancel();
    else if (kind === 4) await assert.rejects(res.text());
    else await res.text();
  }
  assert.deepEqual(f.inFlight(), [0]);
  assert.equal(s.listeners(), 0, "abort listeners left on the caller's signal");
  f.close();
});

test("a response dropped unread, its caller's signal kept alive, is collected and counted out", async () => {
  if (!canForceGc) return;
  const s = countedSignal();
  const f = budget(() => Promise.resolve(new Response(text("never read"))), false);
  await (async () => {
    for (let i = 0; i < 3; i++) await f.fetch("https://k/a", { signal: s.signal }); // dropped unread
  })();
  assert.deepEqual(f.inFlight(), [3]);
  for (let round = 0; round < 10 && f.inFlight()[0] !== 0; round++) await heapUsed();
  assert.deepEqual(f.inFlight(), [0], "the unread responses were collected and counted out");
  assert.equal(s.listeners(), 0, "abort listeners left on the caller's signal");
  f.close();
});

test("a response dropped unread, no caller signal, is collected and counted out", async () => {
  if (!canForceGc) return;
  const f = budget(() => Promise.resolve(new Response(text("never read"))), false);
  await (async () => {
    for (let i = 0; i < 3; i++) await f.fetch("https://k/a");
  })();
  assert.deepEqual(f.inFlight(), [3]);
  for (let round = 0; round < 10 && f.inFlight()[0] !== 0; round++) await heapUsed();
  assert.deepEqual(f.inFlight(), [0], "the unread responses were collected and counted out");
  f.close();
});
