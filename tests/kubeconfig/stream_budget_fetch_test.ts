import assert from "node:assert/strict";
import {
  pickClient,
  streamBudgetFetch,
  type StreamBudgetOptions,
} from "../../src/kubeconfig/_stream_budget_fetch.ts";
import { KubeClient, KubeStatusError } from "../../mod.ts";
import { ManualClock } from "../../testkit.ts";
import { test } from "../_test.ts";

test("pickClient: the oldest client below the budget, -1 when all are at it", () => {
  const table: [number[], number, number][] = [
    [[], 4, -1], // no client yet: make one
    [[0], 4, 0],
    [[3], 4, 0],
    [[4], 4, -1],
    [[4, 0], 4, 1],
    [[4, 4, 2], 4, 2],
    [[2, 4, 0], 4, 0], // room in the first: short requests keep to it
    [[4, 4, 4], 4, -1],
    [[1], 1, -1],
    [[0, 0], 1, 0],
    [[100, 99], 100, 1],
  ];
  for (const [inFlight, budget, expected] of table) {
    assert.equal(pickClient(inFlight, budget), expected, `${JSON.stringify(inFlight)} / ${budget}`);
  }
  // a retired client takes nothing, whatever its room
  const retiredTable: [number[], boolean[], number][] = [
    [[0], [true], -1],
    [[0, 0], [true, false], 1],
    [[1, 4, 0], [false, false, false], 0],
    [[1, 4, 0], [true, false, false], 2],
    [[0, 0], [true, true], -1],
  ];
  for (const [inFlight, retired, expected] of retiredTable) {
    assert.equal(pickClient(inFlight, 4, retired), expected, JSON.stringify({ inFlight, retired }));
  }
});

/** A controllable response body: push chunks, end it, or fail it. */
class Body {
  controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly stream = new ReadableStream<Uint8Array>({
    start: (c) => void (this.controller = c),
  });
  push(text: string) {
    this.controller.enqueue(new TextEncoder().encode(text));
  }
}

/** Fake clients: `send` answers from `next`, and records which client took each request. */
function fakes(options: Partial<StreamBudgetOptions<number>> = {}) {
  let made = 0;
  const closed: number[] = [];
  const sentOn: number[] = [];
  const next: (() => Promise<Response>)[] = [];
  const budgeted = streamBudgetFetch<number>({
    budget: 2,
    createClient: () => made++,
    send: (client, _input, init) => {
      sentOn.push(client);
      const answer = next.shift();
      if (answer) return answer();
      // Default: hang until aborted.
      return new Promise((_, reject) => {
        const signal = init?.signal;
        if (signal?.aborted) return reject(signal.reason);
        signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    },
    closeClient: (c) => void closed.push(c),
    ...options,
  });
  return { budgeted, next, sentOn, closed, made: () => made };
}

test("in flight until the body is read to its end; a body-less answer ends at once", async () => {
  const f = fakes();
  const body = new Body();
  f.next.push(() => Promise.resolve(new Response(body.stream, { status: 200 })));
  const res = await f.budgeted.fetch("https://k/a");
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  body.push("hello ");
  body.push("world");
  body.controller.close();
  assert.deepEqual(f.budgeted.inFlight(), [1]); // nothing read yet
  assert.equal(await res.text(), "hello world");
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.next.push(() => Promise.resolve(new Response(null, { status: 204 })));
  const empty = await f.budgeted.fetch("https://k/b");
  assert.equal(empty.status, 204);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
  assert.deepEqual(f.closed, [0]);
});

test("in flight until the body is cancelled, or errors; a read that errors once counts once", async () => {
  const f = fakes();
  const a = new Body();
  const b = new Body();
  f.next.push(() => Promise.resolve(new Response(a.stream)));
  f.next.push(() => Promise.resolve(new Response(b.stream)));
  const ra = await f.budgeted.fetch("https://k/a");
  const rb = await f.budgeted.fetch("https://k/b");
  assert.deepEqual(f.budgeted.inFlight(), [2]);
  a.push("x");
  const reader = ra.body!.getReader();
  assert.equal((await reader.read()).value?.length, 1);
  await reader.cancel();
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  const read = rb.body!.getReader().read();
  b.controller.error(new Error("connection reset"));
  await assert.rejects(read, /connection reset/);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("a request that fails, or is aborted before its answer, is no longer in flight", async () => {
  const f = fakes();
  f.next.push(() => Promise.reject(new TypeError("connection refused")));
  await assert.rejects(f.budgeted.fetch("https://k/a"), /connection refused/);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  const ac = new AbortController();
  const hanging = f.budgeted.fetch("https://k/b", { signal: ac.signal });
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  ac.abort();
  assert.deepEqual(f.budgeted.inFlight(), [0]); // at the abort itself
  await assert.rejects(hanging, { name: "AbortError" });
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  // A signal already aborted: fetch rejects, nothing stays counted.
  await assert.rejects(f.budgeted.fetch("https://k/c", { signal: AbortSignal.abort() }));
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("an abort after the answer ends the request even if its body is never read again", async () => {
  const f = fakes();
  const body = new Body();
  f.next.push(() => Promise.resolve(new Response(body.stream)));
  const ac = new AbortController();
  const res = await f.budgeted.fetch("https://k/watch", { signal: ac.signal });
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  ac.abort();
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  // the body fails with the abort, as fetch's own does; cancelling it later does not count it out twice
  await assert.rejects(res.body!.cancel(), { name: "AbortError" });
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("past the budget a new client takes the request; freed room in the oldest is used first", async () => {
  const f = fakes();
  const acs = Array.from({ length: 5 }, () => new AbortController());
  const pending = acs.map((ac) => f.budgeted.fetch("https://k/w", { signal: ac.signal }));
  assert.deepEqual(f.budgeted.inFlight(), [2, 2, 1]);
  assert.deepEqual(f.sentOn, [0, 1, 2]); // each client's first request goes alone
  acs[0].abort(); // client 0 has room again; its first request has its answer (a failure)
  await assert.rejects(pending[0], { name: "AbortError" });
  await Promise.resolve();
  assert.deepEqual(f.sentOn, [0, 1, 2, 0]); // client 0's waiting one went; client 1's still waits
  const ac = new AbortController();
  pending.push(f.budgeted.fetch("https://k/w", { signal: ac.signal }));
  assert.equal(f.sentOn.at(-1), 0);
  assert.deepEqual(f.budgeted.inFlight(), [2, 2, 1]);
  for (const a of [...acs, ac]) a.abort();
  const settled = await Promise.allSettled(pending);
  assert.ok(settled.every((s) => s.status === "rejected"));
  assert.deepEqual(f.budgeted.inFlight(), [0, 0, 0]);
  assert.equal(f.made(), 3);
  f.budgeted.close();
  f.budgeted.close(); // idempotent
  assert.deepEqual(f.closed, [0, 1, 2]);
  await assert.rejects(f.budgeted.fetch("https://k/after"), TypeError);
});

test("a client's first request goes alone; the others wait for its answer, or their abort", async () => {
  const f = fakes();
  let answer!: (res: Response) => void;
  f.next.push(() => new Promise((resolve) => (answer = resolve)));
  f.next.push(() => Promise.resolve(new Response("later")));
  const first = f.budgeted.fetch("https://k/a");
  const ac = new AbortController();
  const aborted = f.budgeted.fetch("https://k/b", { signal: ac.signal });
  assert.deepEqual(f.sentOn, [0]);
  assert.deepEqual(f.budgeted.inFlight(), [2]); // counted while waiting
  ac.abort();
  await assert.rejects(aborted, { name: "AbortError" });
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  const later = f.budgeted.fetch("https://k/c");
  assert.deepEqual(f.sentOn, [0]);
  answer(new Response("first"));
  assert.equal(await (await first).text(), "first");
  assert.equal(await (await later).text(), "later");
  assert.deepEqual(f.sentOn, [0, 0]); // the aborted one never went
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("many short requests in sequence keep to the first client", async () => {
  const f = fakes();
  for (let i = 0; i < 20; i++) {
    f.next.push(() => Promise.resolve(new Response(`{"n":${i}}`)));
    assert.deepEqual(await (await f.budgeted.fetch("https://k/x")).json(), { n: i });
  }
  assert.equal(f.made(), 1);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("KubeClient over the budgeted fetch: an error answer's body, read for the error, ends the request", async () => {
  const f = fakes();
  f.next.push(() =>
    Promise.resolve(
      new Response("404 page not found\n", {
        status: 404,
        headers: { "content-type": "text/plain" },
      }),
    )
  );
  f.next.push(() =>
    Promise.resolve(
      new Response(JSON.stringify({ kind: "Status", code: 500, message: "boom" }), {
        status: 500,
        headers: { "content-type": "application/json" },
      }),
    )
  );
  const client = new KubeClient({ server: "https://k", fetch: f.budgeted.fetch });
  await assert.rejects(client.requestJson("/api/v1/nothing"), KubeStatusError);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  await assert.rejects(client.requestJson("/api/v1/boom"), /boom/);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("the answer keeps its status, headers, url and redirected flag", async () => {
  const f = fakes();
  const original = new Response("x", { status: 201, statusText: "Made", headers: { "x-a": "1" } });
  Object.defineProperties(original, {
    url: { value: "https://k/final" },
    redirected: { value: true },
  });
  f.next.push(() => Promise.resolve(original));
  const res = await f.budgeted.fetch("https://k/start");
  assert.equal(res.status, 201);
  assert.equal(res.statusText, "Made");
  assert.equal(res.headers.get("x-a"), "1");
  assert.equal(res.url, "https://k/final");
  assert.equal(res.redirected, true);
  assert.equal(await res.text(), "x");
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  f.budgeted.close();
});

test("the others wait for a client's first answer gateMs at most: a slow first answer holds nobody up", async () => {
  const f = fakes({ gateMs: 0 });
  f.next.push(() => new Promise(() => {})); // a list at a version the server has not reached
  f.next.push(() => Promise.resolve(new Response("got")));
  const ac = new AbortController();
  void f.budgeted.fetch("https://k/list", { signal: ac.signal }).catch(() => {});
  const get = f.budgeted.fetch("https://k/get");
  assert.deepEqual(f.sentOn, [0]); // held at first
  assert.equal(await (await get).text(), "got"); // then sent, the first still unanswered
  assert.deepEqual(f.sentOn, [0, 0]);
  ac.abort();
  f.budgeted.close();
});

test("close() aborts every request in flight: waiting for its turn, for its answer, or with its body being read", async () => {
  const f = fakes();
  const body = new Body();
  f.next.push(() => Promise.resolve(new Response(body.stream)));
  const streaming = await f.budgeted.fetch("https://k/watch"); // client 0's first: answered
  const reader = streaming.body!.getReader();
  body.push("event");
  assert.equal((await reader.read()).done, false);
  const awaiting = f.budgeted.fetch("https://k/a"); // client 0, hangs until aborted
  const third = f.budgeted.fetch("https://k/b"); // client 1 (budget 2): its first, hangs
  const waiting = f.budgeted.fetch("https://k/c"); // client 1: waits for that first answer
  assert.deepEqual(f.budgeted.inFlight(), [2, 2]);
  const read = reader.read();
  f.budgeted.close();
  for (const p of [awaiting, third, waiting]) {
    await assert.rejects(
      p,
      (err) => err instanceof TypeError && /connection is closed/.test(err.message),
    );
  }
  await assert.rejects(read, /connection is closed/);
  assert.deepEqual(f.budgeted.inFlight(), []); // closed and forgotten
  assert.deepEqual(f.sentOn, [0, 0, 1]); // the one waiting never went
  assert.deepEqual(f.closed, [0, 1]);
  await assert.rejects(f.budgeted.fetch("https://k/d"), TypeError);
});

test("the caller's signal as fetch takes it: init.signal, even null, replaces the Request's own", async () => {
  const f = fakes();
  const ac = new AbortController();
  f.next.push(() => Promise.resolve(new Response(null, { status: 204 })));
  const own = new Request("https://k/watch", { signal: ac.signal });
  // (the fake's default: hang until the signal it was sent with aborts)
  const first = f.budgeted.fetch("https://k/first");
  assert.equal((await first).status, 204);
  const pending = f.budgeted.fetch(own, { signal: null });
  ac.abort(); // not the signal this request runs under: still in flight
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  const byInit = new AbortController();
  const other = f.budgeted.fetch(own, { signal: byInit.signal });
  byInit.abort(new Error("by init"));
  await assert.rejects(other, /by init/);
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  f.budgeted.close();
  await assert.rejects(pending, TypeError);
  assert.deepEqual(f.budgeted.inFlight(), []);
});

test("an answer whose status no Response can carry (600-999) is handed on as it came and counted out", async () => {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => c.enqueue(new TextEncoder().encode("{}")),
    cancel: () => void (cancelled = true),
  });
  // What Deno's fetch gives for `HTTP/1.1 600` (a Response cannot be constructed with it).
  const answer = {
    status: 600,
    statusText: "",
    headers: new Headers(),
    body,
  } as unknown as Response;
  const f = fakes();
  f.next.push(() => Promise.resolve(answer));
  const res = await f.budgeted.fetch("https://k/a");
  assert.equal(res, answer);
  assert.deepEqual(f.budgeted.inFlight(), [0]);
  await res.body!.cancel();
  assert.ok(cancelled);
  f.budgeted.close();
});

test("a caller's abort on a client silent for silentMs retires it: no new request there, closed once its last one ends, then forgotten", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  const body = new Body();
  f.next.push(() => Promise.resolve(new Response(body.stream))); // a watch
  const watch = new AbortController();
  const res = await f.budgeted.fetch("https://k/watch", { signal: watch.signal }); // client 0, heard at 0
  const reader = res.body!.getReader();
  const other = f.budgeted.fetch("https://k/other"); // client 0 too, hangs (a second watch)
  await clock.advance(31_000); // nothing came since
  watch.abort(); // its idle deadline
  await reader.read().catch(() => {});
  assert.deepEqual(f.budgeted.inFlight(), [1]);
  f.next.push(() => Promise.resolve(new Response("fresh")));
  assert.equal(await (await f.budgeted.fetch("https://k/again")).text(), "fresh");
  assert.deepEqual(f.sentOn, [0, 0, 1]); // the watch's next try went to a new client
  assert.deepEqual(f.closed, []); // the retired one still carries a request
  assert.deepEqual(f.budgeted.inFlight(), [1, 0]);
  f.budgeted.close();
  await assert.rejects(other, TypeError);
  assert.deepEqual(f.closed, [0, 1]); // each closed once
  assert.deepEqual(f.budgeted.inFlight(), []);
});

test("a retired client from which nothing comes for five silentMs after its retirement has what runs on it ended; one heard from meanwhile keeps it longer", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  const lease = f.budgeted.fetch("https://k/lease").then(() => "answered", (e: Error) => e);
  // (the lease GET above has no deadline of its own: it hangs on the dead connection)
  const renew = new AbortController();
  void f.budgeted.fetch("https://k/renew", { signal: renew.signal }).catch(() => {});
  await clock.advance(30_000);
  renew.abort(); // a renewal cut at its deadline on a client silent 30 s: retired at 30 s
  await clock.advance(149_000);
  assert.deepEqual(f.budgeted.inFlight(), [1]); // 149 s after its retirement: not yet
  await clock.advance(1_000);
  const ended = await lease;
  assert.ok(ended instanceof TypeError && /went silent/.test(ended.message), String(ended));
  assert.deepEqual(f.closed, [0]);
  assert.deepEqual(f.budgeted.inFlight(), []); // forgotten
  // heard from after its retirement: what runs on it goes on, for 150 s from then
  const g = fakes({ clock, silentMs: 30_000 });
  const body = new Body();
  g.next.push(() => Promise.resolve(new Response(body.stream)));
  const watch = await g.budgeted.fetch("https://k/watch");
  const reader = watch.body!.getReader();
  const stop = new AbortController();
  void g.budgeted.fetch("https://k/quiet", { signal: stop.signal }).catch(() => {});
  await clock.advance(31_000);
  stop.abort(); // retired
  await clock.advance(50_000);
  body.push("bookmark");
  await reader.read(); // heard 81 s in
  const next = reader.read().then(() => "data", (e: Error) => e.message);
  await clock.advance(149_000);
  assert.deepEqual(g.budgeted.inFlight(), [1], "not ended");
  await clock.advance(1_000); // 150 s since it was heard: ended
  assert.match(String(await next), /went silent/);
  assert.deepEqual(g.closed, [0]);
  g.budgeted.close();
});

test("a caller's abort on a client heard from within silentMs, or close()'s aborts, retire nothing", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  const body = new Body();
  f.next.push(() => Promise.resolve(new Response(body.stream)));
  const res = await f.budgeted.fetch("https://k/busy"); // client 0, its body flows
  const busy = res.body!.getReader();
  const quiet = new AbortController();
  void f.budgeted.fetch("https://k/quiet", { signal: quiet.signal }).catch(() => {});
  await clock.advance(29_000);
  body.push("event");
  await busy.read(); // heard at 29 s
  await clock.advance(11_000);
  quiet.abort(); // lasted 40 s, but the client spoke 11 s ago
  f.next.push(() => Promise.resolve(new Response("same")));
  assert.equal(await (await f.budgeted.fetch("https://k/next")).text(), "same");
  assert.deepEqual(f.sentOn, [0, 0, 0]); // all on client 0: none retired
  await clock.advance(200_000);
  f.budgeted.close(); // aborts the busy one: not a caller's abort
  assert.deepEqual(f.closed, [0]);
});

test("a client silent for minutes whose requests all end by their callers' short deadlines is retired all the same", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  for (let i = 0; i < 4; i++) {
    const deadline = new AbortController();
    const renewal = f.budgeted.fetch("https://k/lease", { signal: deadline.signal });
    await clock.advance(10_000);
    deadline.abort(); // each cut at its 10 s deadline, nothing ever heard
    await renewal.catch(() => {});
  }
  // the third renewal's abort came 30 s into the silence: that client is gone, the fourth went to
  // a new one (silent only 10 s at its abort: kept)
  f.next.push(() => Promise.resolve(new Response("renewed")));
  assert.equal(await (await f.budgeted.fetch("https://k/lease")).text(), "renewed");
  assert.deepEqual(f.sentOn, [0, 0, 0, 1, 1]);
  assert.deepEqual(f.closed, [0]);
  f.budgeted.close();
});

test("a client idle for long is not silent: a request on it aborted soon after does not retire it", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  f.next.push(() => Promise.resolve(new Response("first")));
  assert.equal(await (await f.budgeted.fetch("https://k/a")).text(), "first");
  await clock.advance(600_000); // ten idle minutes
  const ac = new AbortController();
  const cut = f.budgeted.fetch("https://k/b", { signal: ac.signal });
  await clock.advance(1_000);
  ac.abort(); // a caller that gave up after a second
  await cut.catch(() => {});
  f.next.push(() => Promise.resolve(new Response("same")));
  assert.equal(await (await f.budgeted.fetch("https://k/c")).text(), "same");
  assert.deepEqual(f.sentOn, [0, 0, 0]);
  assert.deepEqual(f.closed, []);
  f.budgeted.close();
});

test("an idle spell after a request cut unanswered is not silence: the next requests on that client are not ended nor the client retired", async () => {
  const clock = new ManualClock(0);
  const f = fakes({ clock, silentMs: 30_000 });
  const cut = new AbortController();
  const first = f.budgeted.fetch("https://k/list", { signal: cut.signal });
  await clock.advance(5_000);
  cut.abort(); // cut before its answer: 5 s of silence
  await first.catch(() => {});
  await clock.advance(600_000); // ten idle minutes
  let slowEnded: string | undefined;
  f.budgeted.fetch("https://k/slow-list").then(
    () => (slowEnded = "answered"),
    (e) => (slowEnded = String(e)),
  );
  await clock.advance(50);
  const quick = new AbortController();
  const q = f.budgeted.fetch("https://k/get", { signal: quick.signal });
  await clock.advance(20);
  quick.abort(); // a caller that gave up 20 ms in
  await q.catch(() => {});
  await clock.advance(1_000);
  assert.equal(slowEnded, undefined, "the slow list still runs");
  f.next.push(() => Promise.resolve(new Response("same")));
  assert.equal(await (await f.budgeted.fetch("https://k/c")).text(), "same");
  assert.deepEqual(f.sentOn, [0, 0, 0, 0], "the client was not retired");
  f.budgeted.close();
});
