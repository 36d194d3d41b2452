import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { chunkedBody, fixture } from "../_fixtures.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { KubeList } from "../../src/api/types.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { decodeListStream } from "../../src/transport/list_stream.ts";
import { ListDecodeError, type ListDecodeProblem } from "../../src/api/list_decode_error.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";
import { bomOffsets } from "./_http_server.ts";

const enc = new TextEncoder();

/** What the decoder must give: JSON.parse of the same text, with a missing or null `items` as `[]`. */
function expected(text: string): unknown {
  const list = JSON.parse(text);
  list.items ??= [];
  return list;
}

function decode(bytes: Uint8Array, sizes: number[] | number): Promise<KubeList> {
  return decodeListStream(chunkedBody(bytes, sizes).body);
}

async function decodeError(
  text: string,
  sizes: number[] | number,
): Promise<{ error: unknown; cancelled: boolean }> {
  const { body, cancelled } = chunkedBody(enc.encode(text), sizes);
  try {
    await decodeListStream(body);
  } catch (error) {
    return { error, cancelled: cancelled() };
  }
  return { error: undefined, cancelled: cancelled() };
}

/** Every split point of `text` into two chunks, then one byte per chunk. */
async function assertEveryChunking(text: string, step = 1): Promise<void> {
  const bytes = enc.encode(text);
  const want = expected(text);
  assert.deepEqual(await decode(bytes, bytes.length), want, "one chunk");
  for (let cut = 1; cut < bytes.length; cut += step) {
    assert.deepEqual(await decode(bytes, [cut, bytes.length]), want, `split at byte ${cut}`);
  }
  assert.deepEqual(await decode(bytes, 1), want, "one byte per chunk");
}

for (const name of ["list-page1.http", "list-page2.http", "list-deployments-empty.http"]) {
  test(`decodeListStream decodes the recorded ${name} exactly, whatever the split point`, async () => {
    const { body } = fixture(name);
    await assertEveryChunking(body);
  });
}

test("decodeListStream keeps the list's kind, apiVersion and metadata", async () => {
  const list = await decode(enc.encode(fixture("list-page1.http").body), 100);
  assert.equal(list.kind, "ConfigMapList");
  assert.equal(list.apiVersion, "v1");
  assert.equal(list.metadata.resourceVersion, "195");
  assert.ok(list.metadata.continue);
  assert.equal(list.items.length, 2);
  const data = (list.items[0] as unknown as { data: Record<string, string> }).data;
  assert.equal(data.unicode, "héllo ✓ 日本");
});

const tricky = {
  kind: "ConfigMapList",
  apiVersion: "v1",
  metadata: { resourceVersion: "42", note: 'a "quoted" ] } , [ { items' },
  items: [
    { metadata: { name: "brackets" }, data: { a: "]", b: "}", c: ",", d: "[{", e: '"items":[' } },
    { metadata: { name: "escapes" }, data: { q: '\\"', bs: "\\", bs2: "\\\\", end: 'x\\"]}' } },
    {
      metadata: { name: "unicode" },
      data: { u: "\u0000\u001f\u2028é✓日本🎉", esc: "\ud83c\udf89" },
    },
    {
      metadata: { name: "nested" },
      spec: { a: [[1, [2, { b: [] }]], {}, { c: { d: [null, true] } }] },
    },
    { metadata: { name: "numbers" }, spec: { n: -1.5e-7, z: 0, big: 12345678901234567890 } },
  ],
};

test("decodeListStream handles brackets, commas and quotes inside strings, escapes and unicode at every split", async () => {
  await assertEveryChunking(JSON.stringify(tricky));
  await assertEveryChunking(JSON.stringify(tricky, null, 2), 3);
  await assertEveryChunking(JSON.stringify(tricky, null, "\t"), 5);
});

test("decodeListStream decodes JSON written with \\u escapes and a trailing newline", async () => {
  const text = JSON.stringify(tricky).replace(
    /[<>&é✓]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ) + "\n";
  await assertEveryChunking(text, 11);
});

test("decodeListStream accepts items null, empty, missing, and other member orders", async () => {
  for (
    const text of [
      '{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":null}',
      '{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}',
      '{"kind":"PodList","metadata":{"resourceVersion":"1"}}',
      '{"items":[{"a":1}],"metadata":{"resourceVersion":"1"},"kind":"PodList"}',
      '{ "items" : [ ] , "metadata" : { } }',
      ' \r\n\t{ "items" :\n[\n{ "a" : [ 1 , 2 ] }\n,\n{ }\n]\n}\n ',
      "{}",
      '{"items":[1,"two",[3],{"four":4},null,true]}',
    ]
  ) {
    await assertEveryChunking(text);
  }
  const list = await decode(enc.encode('{"metadata":{},"items":null}'), 4);
  assert.deepEqual(list.items, []);
});

test("decodeListStream keeps the last of duplicated members, and __proto__ as an own member", async () => {
  const text = '{"items":[{"a":1}],"kind":"A","kind":"B","items":[{"b":2}],"__proto__":{"x":1}}';
  const list = await decode(enc.encode(text), 3);
  assert.deepEqual(list, expected(text));
  assert.equal(Object.getPrototypeOf(list), Object.prototype);
});

test("decodeListStream decodes multi-megabyte items in small chunks", async () => {
  const big = "✓".repeat(400_000) + '\\"]},'.repeat(1000) + "x".repeat(300_000);
  const item = { metadata: { name: "big" }, data: { big } };
  const text = JSON.stringify({ metadata: {}, items: [item, item, { metadata: { name: "s" } }] });
  const list = await decode(enc.encode(text), 1021);
  assert.deepEqual(list, expected(text));
});

test("decodeListStream decodes many items arriving in uneven chunks", async () => {
  const items = Array.from({ length: 3000 }, (_, i) => ({
    metadata: { name: `cm-${i}`, namespace: "x" },
    data: { s: "é".repeat(i % 17), q: '"'.repeat(i % 5) },
  }));
  const text = JSON.stringify({ kind: "ConfigMapList", metadata: { resourceVersion: "9" }, items });
  const bytes = enc.encode(text);
  const sizes = Array.from({ length: 5000 }, (_, i) => 1 + ((i * 7919) % 257));
  assert.deepEqual(await decode(bytes, sizes), expected(text));
});

async function assertProblem(text: string, problem: ListDecodeProblem): Promise<void> {
  for (const size of [1, 2, 7, 10_000]) {
    const { error, cancelled } = await decodeError(text, size);
    assert.ok(error instanceof ListDecodeError, `${JSON.stringify(text)} in ${size}-byte chunks`);
    assert.equal(error.problem, problem, `${JSON.stringify(text)} in ${size}-byte chunks`);
    assert.ok(!cancelled || problem !== "truncated", "a body read to its end is not cancelled");
  }
}

test("decodeListStream reports a body cut short as truncated", async () => {
  const full = JSON.stringify(tricky);
  for (const cut of [0, 1, 10, 40, 60, 100, full.indexOf('"items"') + 9, full.length - 1]) {
    await assertProblem(full.slice(0, cut), "truncated");
  }
  await assertProblem("   \n", "truncated");
  await assertProblem('{"items":[{"a":"\\', "truncated");
});

test("decodeListStream reports invalid JSON as a syntax error, without quoting the body", async () => {
  for (
    const text of [
      "<html><body>502 Bad Gateway SECRET</body></html>",
      'not json SECRET {"items":[]}',
      '{"items":[1,]}',
      '{"items":[,1]}',
      '{"items":[1,,2]}',
      '{"items":[1 2]}',
      '{"items":[{"a":1]]}',
      '{"items":[{"a":1}}]}',
      '{"items":[SECRET]}',
      '{"items":[1],}',
      '{"items":[1]]}',
      '{"items" [1]}',
      '{"kind":}',
      '{"kind":"x" "SECRET":1}',
      '{"kind":"x",}',
      '{,"kind":"x"}',
      "{kind:1}",
      '{"kind":"x"]',
      '{"items":[]} trailing SECRET',
      '{"items":[]}{}',
      '{"items":["bad \\q escape SECRET"]}',
      '{"bad \\q key":1}',
    ]
  ) {
    await assertProblem(text, "syntax");
    const { error } = await decodeError(text, 3);
    assert.ok(error instanceof Error && !error.message.includes("SECRET"), error?.toString());
  }
});

test("decodeListStream reports JSON that is not a list object as a shape error", async () => {
  for (const text of ["[1,2]", '{"items":5}', '{"items":{"a":1}}', '{"items":"x"}']) {
    await assertProblem(text, "shape");
  }
});

test("decodeListStream refuses an item longer than maxItemLength and cancels the body", async () => {
  const text = JSON.stringify({ items: [{ a: "x".repeat(5000) }, { b: 1 }] });
  for (const size of [100, text.length]) {
    const { body, cancelled } = chunkedBody(enc.encode(text), size);
    await assert.rejects(
      decodeListStream(body, { maxItemLength: 1000 }),
      (err: unknown) => err instanceof ListDecodeError && err.problem === "too-long",
    );
    assert.ok(size === text.length || cancelled(), "the body is cancelled");
  }
  const ok = await decode(enc.encode(text), 100);
  assert.equal(ok.items.length, 2);
});

test("decodeListStream cancels the body on a decode error: at once for a body that is not an object, as soon as it is seen in a body too large to parse whole", async () => {
  // larger than the whole-body limit (here maxItemLength, 64 characters): scanned as it arrives
  const text = '{"items":[{"a":1},SECRET' + ",{}".repeat(1000) + "]}";
  const { body, cancelled } = chunkedBody(enc.encode(text), 16);
  await assert.rejects(decodeListStream(body, { maxItemLength: 64 }), ListDecodeError);
  assert.ok(cancelled(), "the rest of a large malformed body is not read");
  const page = "<html><body>502 Bad Gateway</body></html>" + " ".repeat(5000);
  const html = await decodeError(page, 16);
  assert.ok(html.error instanceof ListDecodeError && html.error.problem === "syntax");
  assert.ok(html.cancelled, "a body that does not open an object is refused at its first piece");
});

test("decodeListStream parses a small body whole and a large one item by item, with the same result and the same errors", async () => {
  const list = {
    kind: "ConfigMapList",
    metadata: { resourceVersion: "7", continue: "x" },
    items: Array.from({ length: 50 }, (_, i) => ({ metadata: { name: `cm-${i}` }, data: { i } })),
  };
  const text = JSON.stringify(list);
  const small = await decodeListStream(chunkedBody(enc.encode(text), 100).body);
  const large = await decodeListStream(chunkedBody(enc.encode(text), 100).body, {
    maxItemLength: 200, // below the body's size: scanned
  });
  assert.deepEqual(small, list);
  assert.deepEqual(large, list);
  for (const bad of ['{"items":[{"a":1},]}', '{"items":"no"}', "[1,2]", '{"items":[{"a":1}]']) {
    const whole = await decodeError(bad, 4);
    const { body } = chunkedBody(enc.encode(bad), 4);
    let scanned: unknown;
    await decodeListStream(body, { maxItemLength: 8 }).catch((e) => (scanned = e));
    assert.ok(whole.error instanceof ListDecodeError, bad);
    assert.equal(String(whole.error), String(scanned), `${bad}: the same error both ways`);
  }
});

test("decodeListStream rejects with the signal's reason and cancels the body on abort", async () => {
  let wasCancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode('{"kind":"ConfigMapList","items":[{"a":1},'));
    },
    cancel() {
      wasCancelled = true;
    },
  });
  const ac = new AbortController();
  const reason = new Error("stop now");
  const p = decodeListStream(body, { signal: ac.signal });
  setTimeout(() => ac.abort(reason), 10);
  await assert.rejects(p, (err: unknown) => err === reason);
  assert.ok(wasCancelled);

  const { body: body2, cancelled } = chunkedBody(enc.encode("{}"), 1);
  await assert.rejects(
    decodeListStream(body2, { signal: AbortSignal.abort(reason) }),
    (err) => err === reason,
  );
  assert.ok(cancelled());
});

test("decodeListStream reports a body that fails mid-stream as a KubeNetworkError", async () => {
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulls++ === 0) c.enqueue(enc.encode('{"items":[{"a":1},'));
      else c.error(new TypeError("connection reset"));
    },
  });
  const err = await decodeListStream(body).catch((e) => e);
  assert.ok(err instanceof KubeNetworkError);
  assert.ok(err.cause instanceof TypeError);
});

test("resourceListerWatcher lists many objects over HTTP through the incremental decoder", async () => {
  const server = await FakeApiServer.start();
  try {
    const n = 2000;
    for (let i = 0; i < n; i++) {
      server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `cm-${i}`, namespace: `ns-${i % 3}` },
        data: { text: `é✓ "${i}" ]},[{`, n: String(i) },
      } as never);
    }
    const client = new KubeClient({ server: server.url });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    // resourceVersion=0: served whole from the watch cache, limit ignored.
    const list = await lw.list({ resourceVersion: "0", limit: 500 });
    assert.equal(list.kind, "ConfigMapList");
    assert.equal(list.items.length, n);
    assert.equal(list.metadata.resourceVersion, String(server.resourceVersion));
    assert.equal(list.metadata.continue, undefined);
    const raw = await client.requestJson<KubeList>("/api/v1/configmaps", {
      query: { resourceVersion: "0" },
    });
    assert.deepEqual(list, raw);
    const names = new Set(list.items.map((o) => o.metadata?.name));
    assert.equal(names.size, n);
  } finally {
    await server.close();
  }
});

test("resourceListerWatcher turns an invalid list body into a KubeStatusError that quotes nothing", async () => {
  const server = await FakeApiServer.start();
  try {
    server.inject({
      verb: "list",
      fault: { kind: "raw", data: '{"kind":"ConfigMapList","items":[{"SECRET":1},' },
    });
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const err = await lw.list({ resourceVersion: "0" }).catch((e) => e);
    assert.ok(err instanceof KubeStatusError, String(err));
    assert.equal(err.code, 200);
    assert.match(err.message, /GET \/api\/v1\/configmaps: 200: response body is not valid JSON/);
    assert.ok(!err.message.includes("SECRET"));
  } finally {
    await server.close();
  }
});

test("resourceListerWatcher's list rejects with the signal's reason when aborted mid-body", async () => {
  const server = await FakeApiServer.start();
  try {
    server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "x" } });
    server.inject({ verb: "list", fault: { kind: "stall" } });
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const ac = new AbortController();
    const reason = new Error("stop");
    const p = lw.list({ resourceVersion: "0", signal: ac.signal });
    setTimeout(() => ac.abort(reason), 50);
    await assert.rejects(p, (e: unknown) => e === reason);
  } finally {
    await server.close();
  }
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

test("decodeListStream keeps every U+FEFF of the content when chunks start right at EF BB BF", async () => {
  const data = { lead: "\uFEFFv", tail: "v\uFEFF", only: "\uFEFF", two: "\uFEFF\uFEFF😀" };
  const list = {
    kind: "ConfigMapList",
    metadata: { resourceVersion: "3", note: "\uFEFF" },
    items: [1, 2, 3].map((i) => ({ metadata: { name: `\uFEFF${i}` }, data })),
  };
  for (const text of [JSON.stringify(list), JSON.stringify(list, null, 2)]) {
    const bytes = enc.encode(text);
    const boms = bomOffsets(bytes);
    assert.equal(boms.length, 19);
    for (const shift of [0, 1, 2, 3]) {
      const sizes = sizesAt(boms.map((b) => b + shift), bytes.length);
      assert.deepEqual(await decode(bytes, sizes), expected(text), `shift ${shift}`);
    }
    assert.deepEqual(await decode(bytes, 1), expected(text), "one byte per chunk");
  }
});

test("decodeListStream skips one byte order mark at the very start of the body only", async () => {
  const text = '{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"\uFEFF"}}]}';
  for (const size of [1, 2, 3, 4, 1000]) {
    assert.deepEqual(await decode(enc.encode("\uFEFF" + text), size), expected(text), `${size}`);
  }
  await assertProblem("\uFEFF\uFEFF" + text, "syntax");
  await assertProblem(" \uFEFF" + text, "syntax");
});

test("decodeListStream refuses bytes that are not valid UTF-8 with a typed error and cancels the body", async () => {
  const head = enc.encode('{"kind":"ConfigMapList","items":[{"a":"ok"},{"metadata":{"name":"');
  const tail = enc.encode('"}},{"b":1}]}');
  for (const bad of [[0xff], [0xc3, 0x28], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf8, 0x88]]) {
    const bytes = new Uint8Array([...head, ...bad, ...tail]);
    for (const size of [1, 5, 4096]) {
      const { body, cancelled } = chunkedBody(bytes, size);
      const error = await decodeListStream(body).catch((e) => e);
      assert.ok(error instanceof ListDecodeError, `${bad} in ${size}-byte chunks: ${error}`);
      assert.equal(error.problem, "encoding");
      assert.match(error.message, /not valid UTF-8/);
      assert.ok(size === 4096 || cancelled(), "the body is cancelled");
    }
  }
  const cut = new Uint8Array([...enc.encode('{"items":["'), 0xf0, 0x9f, 0x98]);
  // the body ends inside a character
  const direct = await decodeListStream(chunkedBody(cut, 2).body).catch((e) => e);
  assert.ok(direct instanceof ListDecodeError && direct.problem === "encoding", String(direct));
});
