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

test("a retry answered with another status, or failing, leaves the first error (the retry's body released)", async () => {
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
    (err) => err === GOAWAY,
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
