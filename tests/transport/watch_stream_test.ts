import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { chunkedBody, fixture } from "../_fixtures.ts";
import { KubeNetworkError, WatchDecodeError } from "../../src/api/errors.ts";
import type { WatchEvent } from "../../src/api/types.ts";
import { watchStream } from "../../src/transport/watch_stream.ts";

const enc = new TextEncoder();

async function collect(body: ReadableStream<Uint8Array>): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of watchStream(body)) out.push(ev);
  return out;
}

async function collectUntilError(
  body: ReadableStream<Uint8Array>,
): Promise<{ events: WatchEvent[]; error: unknown }> {
  const events: WatchEvent[] = [];
  try {
    for await (const ev of watchStream(body)) events.push(ev);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

test("watchStream decodes the recorded kube-apiserver watch stream", async () => {
  const { body } = fixture("watch-events.http");
  const events = await collect(chunkedBody(enc.encode(body), 64 * 1024).body);
  assert.deepEqual(events.map((e) => e.type), [
    "MODIFIED",
    "DELETED",
    "ADDED",
    "BOOKMARK",
    "BOOKMARK",
  ]);
  const first = events[0] as unknown as { object: { data: Record<string, string> } };
  assert.equal(first.object.data.unicode, "héllo ✓ 日本");
  assert.equal(events[4].object.metadata?.resourceVersion, "198");
});

test("watchStream decodes exactly whatever the split point, including inside UTF-8 characters", async () => {
  const bytes = enc.encode(fixture("watch-events.http").body);
  const expected = await collect(chunkedBody(bytes, bytes.length).body);
  for (let cut = 1; cut < bytes.length; cut += 7) {
    const got = await collect(chunkedBody(bytes, [cut, bytes.length]).body);
    assert.deepEqual(got, expected, `split at byte ${cut}`);
  }
  assert.deepEqual(await collect(chunkedBody(bytes, 1).body), expected, "one byte per chunk");
});

test("watchStream decodes a multi-megabyte event delivered in small chunks without newlines", async () => {
  const big = "✓".repeat(400_000) + "x".repeat(300_000);
  const line = JSON.stringify({
    type: "ADDED",
    object: { metadata: { name: "big" }, data: { big } },
  });
  const bytes = enc.encode(line + "\n" + line + "\n");
  const events = await collect(chunkedBody(bytes, 1021).body);
  assert.equal(events.length, 2);
  for (const ev of events) {
    assert.equal(ev.type, "ADDED");
    assert.equal((ev.object as unknown as { data: { big: string } }).data.big, big);
  }
});

test("watchStream skips blank lines and accepts CRLF line ends", async () => {
  const text = '\n{"type":"ADDED","object":{"metadata":{"name":"a"}}}\r\n\n';
  const events = await collect(chunkedBody(enc.encode(text), 5).body);
  assert.equal(events.length, 1);
});

test("watchStream throws a typed error for a garbage line after yielding the good ones", async () => {
  const text =
    '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\nnot json at all\n{"type":"ADDED","object":{"metadata":{"name":"b"}}}\n';
  const { body, cancelled } = chunkedBody(enc.encode(text), 13);
  const { events, error } = await collectUntilError(body);
  assert.equal(events.length, 1);
  assert.ok(error instanceof WatchDecodeError);
  assert.equal(error.problem, "syntax");
  assert.equal(error.line, 2);
  assert.ok(!error.message.includes("not json"), "the line's content is not quoted");
  assert.ok(cancelled(), "the body is cancelled");
});

test("watchStream rejects an HTML error page in the stream", async () => {
  const html =
    "<html><head><title>502 Bad Gateway</title></head>\n<body>bad gateway</body></html>\n";
  const { error } = await collectUntilError(chunkedBody(enc.encode(html), 10).body);
  assert.ok(error instanceof WatchDecodeError);
  assert.equal(error.problem, "syntax");
});

test("watchStream rejects JSON that is not a watch event", async () => {
  for (
    const line of [
      '{"kind":"ConfigMap"}',
      '{"type":"SOMETHING","object":{}}',
      '{"type":"ADDED","object":null}',
      "[1,2]",
      '{"type":"ADDED","object":{"data":{}}}',
    ]
  ) {
    const { error } = await collectUntilError(chunkedBody(enc.encode(line + "\n"), 100).body);
    assert.ok(error instanceof WatchDecodeError, line);
    assert.equal(error.problem, "shape", line);
  }
});

test("watchStream reports a stream cut in the middle of an event as truncated", async () => {
  const text = '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","obj';
  const { events, error } = await collectUntilError(chunkedBody(enc.encode(text), 8).body);
  assert.equal(events.length, 1);
  assert.ok(error instanceof WatchDecodeError);
  assert.equal(error.problem, "truncated");
});

test("watchStream refuses a run without newline longer than maxEventLength", async () => {
  const bytes = enc.encode("x".repeat(10_000));
  const { body, cancelled } = chunkedBody(bytes, 100);
  await assert.rejects(async () => {
    for await (const _ of watchStream(body, { maxEventLength: 1000 })) { /* none */ }
  }, (err: unknown) => err instanceof WatchDecodeError && err.problem === "line-too-long");
  assert.ok(cancelled());
});

test("watchStream cancels its body when the consumer breaks", async () => {
  const text = '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'.repeat(5);
  const { body, cancelled } = chunkedBody(enc.encode(text), 10);
  for await (const _ of watchStream(body)) break;
  assert.ok(cancelled());
});

test("watchStream rejects with the signal's reason and cancels the body on abort", async () => {
  let wasCancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'));
    },
    cancel() {
      wasCancelled = true;
    },
  });
  const ac = new AbortController();
  const reason = new Error("stop now");
  const seen: string[] = [];
  await assert.rejects(async () => {
    for await (const ev of watchStream(body, { signal: ac.signal })) {
      seen.push(ev.type);
      ac.abort(reason);
    }
  }, (err: unknown) => err === reason);
  assert.deepEqual(seen, ["ADDED"]);
  assert.ok(wasCancelled);
});

test("watchStream decodes ERROR events carrying a Status", async () => {
  const { body } = fixture("watch-too-old-no-watch-cache.http");
  const events = await collect(chunkedBody(enc.encode(body), 17).body);
  assert.equal(events.length, 1);
  const ev = events[0];
  assert.equal(ev.type, "ERROR");
  if (ev.type === "ERROR") {
    assert.equal(ev.object.code, 410);
    assert.equal(ev.object.reason, "Expired");
  }
});

test("watchStream reports a body that fails mid-stream as a KubeNetworkError", async () => {
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulls++ === 0) {
        c.enqueue(enc.encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'));
      } else c.error(new TypeError("connection reset"));
    },
  });
  const { events, error } = await collectUntilError(body);
  assert.equal(events.length, 1);
  assert.ok(error instanceof KubeNetworkError);
  assert.ok(error.cause instanceof TypeError);
});
