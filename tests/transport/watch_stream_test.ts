import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { chunkedBody, fixture } from "../_fixtures.ts";
import { KubeNetworkError, WatchDecodeError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { WatchEvent } from "../../src/api/types.ts";
import { watchBatches, watchStream } from "../../src/transport/watch_stream.ts";
import { bomOffsets } from "./_http_server.ts";

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

/** Chunk sizes cutting `length` bytes at each of `cuts`. */
function sizesAt(cuts: number[], length: number): number[] {
  const sizes: number[] = [];
  let from = 0;
  for (const cut of [...cuts, length]) {
    if (cut > from) sizes.push(cut - from);
    from = Math.max(from, cut);
  }
  return sizes;
}

test("watchStream keeps every U+FEFF of the content when chunks start right at EF BB BF", async () => {
  const values = { lead: "\uFEFFv", tail: "v\uFEFF", only: "\uFEFF", two: "\uFEFF\uFEFF😀" };
  const events = [1, 2, 3].map((i) => ({
    type: "ADDED",
    object: { metadata: { name: `\uFEFF${i}`, resourceVersion: String(i) }, data: values },
  }));
  const bytes = enc.encode(events.map((e) => JSON.stringify(e) + "\n").join(""));
  const boms = bomOffsets(bytes);
  assert.equal(boms.length, 18);
  for (const shift of [0, 1, 2, 3]) {
    const sizes = sizesAt(boms.map((b) => b + shift), bytes.length);
    assert.deepEqual(await collect(chunkedBody(bytes, sizes).body), events, `shift ${shift}`);
  }
  assert.deepEqual(await collect(chunkedBody(bytes, 1).body), events, "one byte per chunk");
});

test("watchStream skips one byte order mark at the very start of the body only", async () => {
  const line = '{"type":"ADDED","object":{"metadata":{"name":"\uFEFFa"}}}\n';
  for (const size of [1, 2, 3, 4, 1000]) {
    const events = await collect(chunkedBody(enc.encode("\uFEFF" + line), size).body);
    assert.equal(events.length, 1);
    assert.equal(events[0].object.metadata?.name, "\uFEFFa", `${size}-byte chunks`);
  }
  const { error } = await collectUntilError(
    chunkedBody(enc.encode(line + "\uFEFF" + line), 3).body,
  );
  assert.ok(error instanceof WatchDecodeError && error.problem === "syntax", String(error));
});

test("watchStream refuses bytes that are not valid UTF-8 with a typed error and cancels the body", async () => {
  const good = enc.encode('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n');
  for (
    const bad of [
      [0xff],
      [0xc3, 0x28],
      [0xe2, 0x82], // cut short, then a quote
      [0xed, 0xa0, 0x80], // a UTF-16 surrogate encoded
      [0xc0, 0xaf], // overlong
    ]
  ) {
    const bytes = new Uint8Array([
      ...good,
      ...enc.encode('{"type":"ADDED","object":{"metadata":{"name":"'),
      ...bad,
      ...enc.encode('"}}}\n'),
      ...good,
    ]);
    for (const size of [1, 7, 4096]) {
      const { body, cancelled } = chunkedBody(bytes, size);
      const { events, error } = await collectUntilError(body);
      assert.ok(error instanceof WatchDecodeError, `${bad} in ${size}-byte chunks: ${error}`);
      assert.equal(error.problem, "encoding");
      assert.match(error.message, /is not valid UTF-8/);
      assert.ok(events.length <= 1);
      assert.ok(size === 4096 || cancelled(), "the body is cancelled");
    }
  }
  const cut = new Uint8Array([...good.slice(0, -1), 0xe2, 0x82]); // ends inside a character
  const { error } = await collectUntilError(chunkedBody(cut, 5).body);
  assert.ok(error instanceof WatchDecodeError && error.problem === "encoding", String(error));
});

test("watchStream turns a bare Status line into the KubeStatusError it stands for", async () => {
  const status = {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason: "Expired",
    code: 410,
  };
  const text = '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n' + JSON.stringify(status) +
    "\n";
  const { events, error } = await collectUntilError(chunkedBody(enc.encode(text), 9).body);
  assert.equal(events.length, 1);
  assert.ok(error instanceof KubeStatusError, String(error));
  assert.equal(error.code, 410);
  assert.deepEqual(error.status, status);
  for (const odd of ['{"kind":"Status","code":"x"}', '{"kind":"Status","status":"Success"}']) {
    const { error } = await collectUntilError(chunkedBody(enc.encode(odd + "\n"), 4).body);
    assert.ok(error instanceof KubeStatusError && error.code === 500, String(error));
  }
});

test("watchStream refuses an object whose metadata.resourceVersion is not a string", async () => {
  for (const rv of ["1", "{}", "[]", "false"]) {
    const line = `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":${rv}}}}\n`;
    const { error } = await collectUntilError(chunkedBody(enc.encode(line), 8).body);
    assert.ok(error instanceof WatchDecodeError && error.problem === "shape", `${rv}: ${error}`);
  }
  const ok = '{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":null}}}\n';
  assert.equal((await collect(chunkedBody(enc.encode(ok), 8).body)).length, 1);
});

test("watchBatches hands out the events of one read together, and the good events of a read before its bad line", async () => {
  const line = (name: string) =>
    JSON.stringify({ type: "ADDED", object: { metadata: { name, resourceVersion: "1" } } }) + "\n";
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(line("a") + line("b") + line("c").slice(0, 10)));
      c.enqueue(enc.encode(line("c").slice(10) + line("d") + "not json\n" + line("e")));
      c.close();
    },
  });
  const batches: string[][] = [];
  let error: unknown;
  try {
    for await (const batch of watchBatches(body)) {
      batches.push(batch.map((e) => (e.object as { metadata: { name: string } }).metadata.name));
    }
  } catch (err) {
    error = err;
  }
  assert.deepEqual(batches, [["a", "b"], ["c", "d"]]);
  assert.ok(error instanceof WatchDecodeError && error.problem === "syntax", String(error));
});
