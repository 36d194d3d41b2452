import assert from "node:assert/strict";
import { resumeAfterGoAway } from "../../src/kubeconfig/_resume_after_goaway.ts";
import { test } from "../_test.ts";

const GOAWAY = new TypeError("terminated", {
  cause: new Error('HTTP/2: "GOAWAY" frame received with code 0'),
});
const lost = (err: unknown) => err === GOAWAY;

/** A body giving `chunks`, one per read, then failing with `error` (or ending). */
function body(chunks: string[], error?: unknown): ReadableStream<Uint8Array> {
  const left = [...chunks];
  return new ReadableStream({
    pull(c) {
      const t = left.shift();
      if (t !== undefined) c.enqueue(new TextEncoder().encode(t));
      else if (error) c.error(error);
      else c.close();
    },
  }, { highWaterMark: 0 });
}

/** A retry answering `answers` in turn, counting its calls. */
function retries(...answers: Response[]) {
  const r = { calls: 0, fn: () => Promise.resolve(answers[r.calls++]) };
  return r;
}

test("a body lost to a GOAWAY before its first byte goes on from the retry's answer (same status), once", async () => {
  const retry = retries(new Response(body(['{"kind":"List"}'])));
  const res = resumeAfterGoAway(new Response(body([], GOAWAY)), retry.fn, lost);
  assert.equal(await res.text(), '{"kind":"List"}');
  assert.equal(retry.calls, 1);
});

test("no resume after a byte was handed on, for another error, or a second time", async () => {
  const afterByte = retries(new Response(body(["x"])));
  await assert.rejects(
    resumeAfterGoAway(new Response(body(["{"], GOAWAY)), afterByte.fn, lost).text(),
    (err) => err === GOAWAY,
  );
  assert.equal(afterByte.calls, 0);
  const other = new TypeError("other");
  const notLost = retries(new Response(body(["x"])));
  await assert.rejects(
    resumeAfterGoAway(new Response(body([], other)), notLost.fn, lost).text(),
    (err) => err === other,
  );
  assert.equal(notLost.calls, 0);
  const twice = retries(new Response(body([], GOAWAY)), new Response(body(["x"])));
  await assert.rejects(
    resumeAfterGoAway(new Response(body([], GOAWAY)), twice.fn, lost).text(),
    (err) => err === GOAWAY,
  );
  assert.equal(twice.calls, 1);
});

test("a retry answered with another status leaves the first error (its body released); a retry that fails fails the body with its own error", async () => {
  let cancelled = false;
  const other = new Response(
    new ReadableStream({ cancel: () => void (cancelled = true) }),
    { status: 500 },
  );
  await assert.rejects(
    resumeAfterGoAway(new Response(body([], GOAWAY)), retries(other).fn, lost).text(),
    (err) => err === GOAWAY,
  );
  assert.ok(cancelled);
  await assert.rejects(
    resumeAfterGoAway(
      new Response(body([], GOAWAY)),
      () => Promise.reject(new Error("refused")),
      lost,
    ).text(),
    /refused/,
  );
});

test("the answer keeps its status, headers and url; a body-less one is handed on as it is", async () => {
  const first = new Response(body(["{}"]), { status: 201, headers: { "x-a": "1" } });
  Object.defineProperty(first, "url", { value: "https://k/api/v1/x" });
  const res = resumeAfterGoAway(first, retries().fn, lost);
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("x-a"), "1");
  assert.equal(res.url, "https://k/api/v1/x");
  assert.equal(await res.text(), "{}");
  const none = new Response(null, { status: 204 });
  assert.equal(resumeAfterGoAway(none, retries().fn, lost), none);
});

/** A body failing at once with the GOAWAY. */
function lostBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({ pull: (c) => c.error(GOAWAY) }, { highWaterMark: 0 });
}

/** A retry's answer whose body records whether it was cancelled (as undici frees its HTTP/1.1 socket). */
function trackedAnswer() {
  const state = { cancelled: false, pulls: 0 };
  const res = new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        state.pulls++;
        c.enqueue(new TextEncoder().encode('{"kind":"List","items":[]}'));
      },
      cancel: () => void (state.cancelled = true),
    }, { highWaterMark: 0 }),
    { status: 200 },
  );
  return { res, state };
}

/** Starts a resume, cancels the body while the retry is pending, then lets the retry answer. */
async function cancelDuringRetry() {
  let answer!: (res: Response) => void;
  let retried = false;
  const retry = () => {
    retried = true;
    return new Promise<Response>((resolve) => (answer = resolve));
  };
  const res = resumeAfterGoAway(new Response(lostBody()), retry, lost);
  const reader = res.body!.getReader();
  const read = reader.read(); // the first read meets the GOAWAY: the retry starts
  for (let i = 0; i < 20 && !retried; i++) await new Promise((r) => setTimeout(r, 1));
  assert.ok(retried, "the retry started");
  // The consumer gives up on the body (a caller timeout, an informer stopped): cancel.
  const cancelled = reader.cancel(new Error("not needed any more")).then(
    () => "resolved",
    (err) => `rejected: ${err === GOAWAY ? "the GOAWAY error" : String(err)}`,
  );
  assert.deepEqual(await read, { done: true, value: undefined });
  // The retry's answer comes after the cancel.
  const again = trackedAnswer();
  answer(again.res);
  for (let i = 0; i < 20 && !again.state.cancelled; i++) await new Promise((r) => setTimeout(r, 1));
  return { cancelled: await cancelled, again: again.state };
}

test("a body cancelled while its resume is under way releases the retry's answer when it comes", async () => {
  const { again } = await cancelDuringRetry();
  assert.ok(
    again.cancelled,
    `the retry's answer is cancelled (else its HTTP/1.1 connection stays taken until GC); pulls: ${again.pulls}`,
  );
});

test("a body cancelled while its resume is under way: cancel() resolves", async () => {
  const { cancelled } = await cancelDuringRetry();
  assert.equal(cancelled, "resolved", "cancel() of a readable body settles");
});

test("a caller's abort during the resume fails the body with the abort's reason", async () => {
  const ac = new AbortController();
  // The retry is the same fetch with the caller's signal: it rejects with the abort's reason.
  const retry = () =>
    new Promise<Response>((_, reject) => {
      ac.signal.addEventListener("abort", () => reject(ac.signal.reason), { once: true });
      queueMicrotask(() => ac.abort(new DOMException("caller gave up", "AbortError")));
    });
  const res = resumeAfterGoAway(new Response(lostBody()), retry, lost);
  const err = await res.text().then(() => undefined, (e) => e);
  assert.equal(
    err === GOAWAY ? "the GOAWAY error" : (err as Error)?.name,
    "AbortError",
    "the body fails with the caller's abort",
  );
});
