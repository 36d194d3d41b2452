/**
 * Seeded fuzzing of the two body decoders (`watchStream`, `decodeListStream`)
 * and of the lister-watcher path around them: random valid bodies (unicode,
 * escapes, U+2028, U+FEFF, astral characters, any member order, pretty
 * printed lists) in random chunkings must decode exactly as `JSON.parse`
 * reads the same text; hostile bodies must end in a typed error
 * (`WatchDecodeError`, `ListDecodeError`, `KubeStatusError`,
 * `KubeNetworkError`), never a raw `TypeError`/`RangeError`/`SyntaxError`,
 * with memory bounded by the maxima.
 *
 * Fixed seeds by default; `FUZZ_SEED=1234` (or `FUZZ_SEED=1,2,3`) replays
 * or explores others. Every failure message names its seed.
 *
 * @module
 */
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "../_test.ts";
import { chunkedBody, mulberry32 } from "../_fixtures.ts";
import { KubeNetworkError, WatchDecodeError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { WatchEvent } from "../../src/api/types.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { decodeListStream } from "../../src/transport/list_stream.ts";
import { ListDecodeError } from "../../src/api/list_decode_error.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { watchStream } from "../../src/transport/watch_stream.ts";

const enc = new TextEncoder();

function seeds(): number[] {
  let given: string | undefined;
  try {
    given = process.env.FUZZ_SEED;
  } catch {
    given = undefined; // no env access: the fixed seeds
  }
  if (!given) return [1, 2, 3, 0xc0ffee];
  return given.split(",").map((s) => Number(s.trim()) >>> 0);
}

class Rand {
  #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  float(): number {
    return this.#next();
  }
  int(n: number): number {
    return Math.floor(this.#next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
  chance(p: number): boolean {
    return this.#next() < p;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

/** Characters that stress the decoders: escapes, separators, BOMs, multi-byte, astral, lone surrogates. */
const CHARS = [
  "a",
  "Z",
  "0",
  " ",
  '"',
  "\\",
  "/",
  "\n",
  "\r",
  "\t",
  "\u0000",
  "\u001f",
  "\u007f",
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  "\u2028",
  "\u2029",
  "\uFEFF",
  "\uFFFD",
  "é",
  "ß",
  "✓",
  "日",
  "本",
  "😀",
  "🎉",
  "𝄞",
  "\ud800", // a lone high surrogate (JSON.stringify escapes it)
  "\udfff", // a lone low surrogate
];

function randomString(r: Rand, max = 24): string {
  let s = "";
  const n = r.int(max);
  for (let i = 0; i < n; i++) {
    s += r.chance(0.5) ? r.pick(CHARS) : String.fromCharCode(97 + r.int(26));
  }
  return s;
}

function randomNumber(r: Rand): number {
  return r.pick([
    () => r.int(1000),
    () => -r.int(1_000_000),
    () => r.float() * 1e6,
    () => -r.float() * 1e-6,
    () => 12345678901234567890,
    () => 0,
    () => Number.MAX_SAFE_INTEGER,
    () => 1e300,
  ])();
}

function randomValue(r: Rand, depth: number): unknown {
  const kind = r.int(depth > 3 ? 4 : 7);
  switch (kind) {
    case 0:
      return randomString(r);
    case 1:
      return randomNumber(r);
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return randomString(r, 4);
    case 4:
    case 5: {
      const obj: Record<string, unknown> = {};
      const n = r.int(5);
      for (let i = 0; i < n; i++) obj[randomString(r, 8)] = randomValue(r, depth + 1);
      return obj;
    }
    default:
      return Array.from({ length: r.int(5) }, () => randomValue(r, depth + 1));
  }
}

/** An object built with its members inserted in a random order. */
function shuffled(r: Rand, members: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of r.shuffle(Object.keys(members))) out[key] = members[key];
  return out;
}

function randomObject(r: Rand, rv: number): Record<string, unknown> {
  const metadata = shuffled(r, {
    name: randomString(r, 12),
    namespace: r.pick(["default", "kube-system", randomString(r, 6)]),
    resourceVersion: String(rv),
    ...(r.chance(0.5) ? { labels: { app: randomString(r, 6) } } : {}),
    ...(r.chance(0.3) ? { annotations: { [randomString(r, 6)]: randomString(r, 40) } } : {}),
  });
  return shuffled(r, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata,
    data: { [randomString(r, 6)]: randomString(r, 60), bom: "\uFEFF" + randomString(r, 4) },
    ...(r.chance(0.5) ? { spec: randomValue(r, 0) } : {}),
  });
}

/**
 * JSON text of `value`, optionally with every non-ASCII character (which
 * JSON only allows inside strings) and `/` written as `\u` / `\/` escapes.
 */
function jsonText(r: Rand, value: unknown, indent?: string | number): string {
  let text = JSON.stringify(value, null, indent);
  if (r.chance(0.25)) {
    text = text.replace(
      /[^ -~\t\n\r]/g, // JSON text outside strings is printable ASCII and whitespace
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );
  }
  if (r.chance(0.25)) text = text.replaceAll("/", "\\/");
  return text;
}

/** Chunk sizes for `bytes`: one byte, tiny, random, cut inside multi-byte characters, or whole. */
function chunking(r: Rand, bytes: Uint8Array): number[] {
  const style = r.int(5);
  if (style === 0) return [1];
  if (style === 1) return Array.from({ length: 64 }, () => 1 + r.int(4));
  if (style === 2) return Array.from({ length: 64 }, () => 1 + r.int(r.pick([8, 64, 700])));
  if (style === 3) {
    // cut right after a lead byte or inside a sequence, wherever there is one
    const cuts: number[] = [];
    for (let i = 1; i < bytes.length; i++) {
      if (bytes[i] >= 0x80 && bytes[i] <= 0xbf && r.chance(0.5)) cuts.push(i);
      else if (r.chance(0.02)) cuts.push(i);
    }
    const sizes: number[] = [];
    let from = 0;
    for (const c of cuts) {
      sizes.push(c - from);
      from = c;
    }
    sizes.push(Math.max(1, bytes.length - from));
    return sizes;
  }
  return [bytes.length];
}

function label(seed: number, i: number, sizes: number[]): string {
  return `seed ${seed}, case ${i} (chunks ${sizes.slice(0, 8).join(",")}${
    sizes.length > 8 ? ",…" : ""
  }); replay with FUZZ_SEED=${seed}`;
}

async function collect(
  body: ReadableStream<Uint8Array>,
  maxEventLength?: number,
): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of watchStream(body, { maxEventLength })) out.push(ev);
  return out;
}

test("fuzz: watchStream decodes random valid streams in random chunkings exactly as JSON.parse", async () => {
  for (const seed of seeds()) {
    const r = new Rand(seed);
    for (let i = 0; i < 60; i++) {
      const lines: string[] = [];
      const n = 1 + r.int(6);
      for (let k = 0; k < n; k++) {
        const type = r.pick(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);
        const object = type === "ERROR"
          ? shuffled(r, {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "Expired",
            message: randomString(r),
            code: 410,
          })
          : randomObject(r, 100 + k);
        const ev = r.chance(0.5) ? { type, object } : { object, type };
        lines.push(jsonText(r, ev));
      }
      const text = lines.map((l) => l + r.pick(["\n", "\n", "\r\n", "\n\n"])).join("");
      const bytes = enc.encode((r.chance(0.1) ? "\uFEFF" : "") + text);
      const sizes = chunking(r, bytes);
      const want = lines.map((l) => JSON.parse(l));
      let got: unknown;
      try {
        got = await collect(chunkedBody(bytes, sizes).body);
      } catch (err) {
        assert.fail(`${label(seed, i, sizes)}: ${err}`);
      }
      assert.deepEqual(got, want, label(seed, i, sizes));
    }
  }
});

test("fuzz: decodeListStream decodes random valid lists (compact or pretty) exactly as JSON.parse", async () => {
  for (const seed of seeds()) {
    const r = new Rand(seed ^ 0x5eed);
    for (let i = 0; i < 60; i++) {
      const items = Array.from({ length: r.int(8) }, (_, k) => randomObject(r, k + 1));
      if (r.chance(0.2)) items.push(randomValue(r, 0) as Record<string, unknown>); // any JSON value
      const list = shuffled(r, {
        kind: "ConfigMapList",
        apiVersion: "v1",
        metadata: shuffled(r, {
          resourceVersion: String(r.int(1e6)),
          ...(r.chance(0.3) ? { continue: randomString(r, 30) } : {}),
        }),
        items: r.chance(0.1) ? null : items,
        ...(r.chance(0.3) ? { extra: randomValue(r, 0) } : {}),
      });
      const text = jsonText(r, list, r.pick([undefined, undefined, 1, 2, "\t"]));
      const bytes = enc.encode(
        (r.chance(0.1) ? "\uFEFF" : "") + text + r.pick(["", "\n", " \r\n"]),
      );
      const sizes = chunking(r, bytes);
      const want = JSON.parse(text);
      want.items ??= [];
      let got: unknown;
      try {
        got = await decodeListStream(chunkedBody(bytes, sizes).body);
      } catch (err) {
        assert.fail(`${label(seed, i, sizes)}: ${err}`);
      }
      assert.deepEqual(got, want, label(seed, i, sizes));
    }
  }
});

/** Whether `err` is one of the typed errors a hostile answer may end in. */
function isTyped(err: unknown): boolean {
  return err instanceof WatchDecodeError || err instanceof ListDecodeError ||
    err instanceof KubeStatusError || err instanceof KubeNetworkError;
}

/** A lister-watcher whose every answer is a 200 with `bytes` in `sizes` chunks. */
function serving(bytes: Uint8Array, sizes: number[] | number, max?: number) {
  const client = new KubeClient({
    server: "http://fuzz.invalid",
    fetch: () =>
      Promise.resolve(
        new Response(chunkedBody(bytes, sizes).body, {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
      ),
  });
  return resourceListerWatcher(client, {
    apiVersion: "v1",
    resource: "configmaps",
    maxEventLength: max,
  });
}

/** What each path gives for `bytes`: a list or events, or the error (which must be typed). */
async function outcomes(
  bytes: Uint8Array,
  sizes: number[] | number,
  where: string,
  max?: number,
): Promise<{ listError: unknown; watchError: unknown; decodeListError: unknown; events: number }> {
  const lw = serving(bytes, sizes, max);
  const listError = await lw.list({}).then(() => undefined, (e) => e);
  let watchError: unknown;
  let events = 0;
  try {
    for await (const _ of lw.watch({})) events++;
  } catch (e) {
    watchError = e;
  }
  const decodeListError = await decodeListStream(chunkedBody(bytes, sizes).body, {
    maxItemLength: max,
  }).then(() => undefined, (e) => e);
  for (
    const [what, err] of [["list", listError], ["watch", watchError], ["decode", decodeListError]]
  ) {
    if (err !== undefined) {
      assert.ok(isTyped(err), `${where}: ${what} threw an untyped ${err}`);
      assert.ok(
        !String((err as Error).message).includes("SECRET"),
        `${where}: ${what} quotes the body`,
      );
    }
  }
  return { listError, watchError, decodeListError, events };
}

const HOSTILE: Array<[string, () => Uint8Array]> = [
  ["empty", () => new Uint8Array(0)],
  ["whitespace", () => enc.encode(" \r\n\t ")],
  [
    "an HTML page",
    () =>
      enc.encode("<html><head><title>502 Bad Gateway</title></head>\n<body>SECRET</body></html>\n"),
  ],
  ["NUL bytes", () => new Uint8Array([0, 0, 0, 0x7b, 0, 0x7d, 0, 0x0a])],
  ["NUL inside a string", () => enc.encode('{"items":["SECRET\u0000"]}\n')],
  ["[]", () => enc.encode("[]")],
  ["[] with a newline", () => enc.encode("[]\n")],
  ["a Status", () =>
    enc.encode(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcd is down","reason":"InternalError","code":500}\n',
    )],
  [
    "a Status with a string code",
    () => enc.encode('{"kind":"Status","status":"Failure","code":"x"}\n'),
  ],
  ["null", () => enc.encode("null\n")],
  ["a number", () => enc.encode("42\n")],
  ["a string", () => enc.encode('"SECRET"\n')],
  ["invalid UTF-8", () => new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d, 0x0a])],
  ["a UTF-16 body", () => new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00, 0x0a, 0x00])],
  ["100k unclosed brackets", () => enc.encode("[".repeat(100_000))],
  ["100k unclosed braces in items", () => enc.encode('{"items":[' + '{"a":'.repeat(100_000))],
  ["100k closing brackets", () => enc.encode("]".repeat(100_000))],
  [
    "a watch line for a list",
    () => enc.encode('{"type":"ADDED","object":{"metadata":{"name":"SECRET"}}}\n'),
  ],
];

test("fuzz: hostile bodies end in typed errors on the list path, the watch path and the decoder", async () => {
  for (const seed of seeds()) {
    const r = new Rand(seed ^ 0xbad);
    for (const [name, make] of HOSTILE) {
      const bytes = make();
      // Small bodies in any chunking (1-byte chunks too); the 100k ones in 7+ byte chunks,
      // which keeps the per-chunk overhead (three paths) well under a second.
      const sizes = bytes.length > 4096
        ? [r.pick([7, 61, 4096])]
        : r.chance(0.3)
        ? [1]
        : chunking(r, bytes);
      const where = `${name}: ${label(seed, 0, sizes)}`;
      const { listError, watchError } = await outcomes(bytes, sizes, where);
      assert.ok(listError !== undefined, `${where}: decoded as a list`);
      if (name.startsWith("a Status")) {
        assert.ok(listError instanceof KubeStatusError && listError.status, where);
        assert.ok(watchError instanceof KubeStatusError && watchError.status, where);
      }
      if (name === "empty" || name === "whitespace") {
        assert.equal(watchError, undefined, "an empty watch is a clean (short) end, not an error");
      }
    }
  }
});

test("fuzz: truncated and corrupted valid bodies end in typed errors or a correct prefix", async () => {
  for (const seed of seeds()) {
    const r = new Rand(seed ^ 0xcafe);
    for (let i = 0; i < 40; i++) {
      const events = Array.from({ length: 1 + r.int(4) }, (_, k) => ({
        type: "ADDED",
        object: randomObject(r, k + 1),
      }));
      const watchText = events.map((e) => JSON.stringify(e) + "\n").join("");
      const listText = JSON.stringify({
        kind: "ConfigMapList",
        metadata: { resourceVersion: "9" },
        items: events.map((e) => e.object),
      });
      for (const text of [watchText, listText]) {
        const full = enc.encode(text);
        let bytes: Uint8Array;
        let how: string;
        if (r.chance(0.5)) {
          const cut = r.int(full.length);
          bytes = full.slice(0, cut);
          how = `truncated at ${cut}`;
        } else {
          const at = r.int(full.length);
          const bad = r.pick([[0xff], [0xc0, 0x80], [0xed, 0xb0, 0x80], [0xf5], [0xe2, 0x28], [
            0x80,
          ]]);
          bytes = new Uint8Array([...full.slice(0, at), ...bad, ...full.slice(at)]);
          how = `invalid UTF-8 at ${at}`;
        }
        const sizes = chunking(r, bytes);
        const where = `${how}: ${label(seed, i, sizes)}`;
        const got = await outcomes(bytes, sizes, where);
        assert.ok(got.events <= events.length, where);
        if (how.startsWith("invalid") && text === listText) {
          assert.ok(got.decodeListError instanceof ListDecodeError, where);
          assert.equal((got.decodeListError as ListDecodeError).problem, "encoding", where);
        } else if (how.startsWith("invalid")) {
          assert.ok(got.watchError instanceof WatchDecodeError, where);
          assert.equal((got.watchError as WatchDecodeError).problem, "encoding", where);
        } else if (text === listText) {
          assert.ok(got.decodeListError instanceof ListDecodeError, `${where}: a cut list decoded`);
        }
      }
    }
  }
});

test("fuzz: 100k nested brackets decode correctly or fail typed, never overflow the stack", async () => {
  const depth = 100_000;
  const nested = "[".repeat(depth) + "]".repeat(depth);
  const measure = (value: unknown): number => {
    let d = 0;
    while (Array.isArray(value) && value.length === 1) {
      value = value[0];
      d++;
    }
    return Array.isArray(value) && value.length === 0 ? d + 1 : -1;
  };
  const listBytes = enc.encode(`{"metadata":{"resourceVersion":"1"},"items":[${nested}]}`);
  for (const size of [7, 4096, listBytes.length]) {
    const list = await decodeListStream(chunkedBody(listBytes, size).body);
    assert.equal(measure(list.items[0]), depth);
  }
  const metaBytes = enc.encode(
    `{"metadata":${'{"a":'.repeat(depth)}1${"}".repeat(depth)},"items":[]}`,
  );
  const list = await decodeListStream(chunkedBody(metaBytes, 4096).body);
  assert.equal(typeof list.metadata, "object");
  const line = `{"type":"ADDED","object":{"metadata":{"name":"deep"},"spec":${nested}}}\n`;
  const events = await collect(chunkedBody(enc.encode(line), 4096).body);
  assert.equal(measure((events[0].object as unknown as { spec: unknown }).spec), depth);
  const unbalanced = enc.encode(
    `{"type":"ADDED","object":{"metadata":{},"x":${"[".repeat(depth)}}}\n`,
  );
  const err = await collect(chunkedBody(unbalanced, 4096).body).catch((e) => e);
  assert.ok(err instanceof WatchDecodeError && err.problem === "syntax", String(err));
});

/** An endless body of `chunk` repeated, counting what was pulled. */
function endless(
  first: string,
  chunk: string,
): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const head = enc.encode(first);
  const more = enc.encode(chunk);
  let pulled = 0;
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      const next = started ? more : head;
      started = true;
      pulled += next.length;
      c.enqueue(next.slice());
    },
  });
  return { body, pulled: () => pulled };
}

test("fuzz: a line, item or member that never ends is refused once past the maximum, memory bounded", async () => {
  const max = 64 * 1024;
  const bound = 2 * max + 8 * 1024;
  const watchCases: Array<[string, string]> = [
    ["", "x".repeat(1024)],
    ['{"type":"ADDED","object":{"metadata":{"name":"', "a".repeat(1000) + "é✓😀"],
    ["", "[".repeat(1024)],
  ];
  for (const [first, chunk] of watchCases) {
    const { body, pulled } = endless(first, chunk);
    const err = await collect(body, max).catch((e) => e);
    assert.ok(err instanceof WatchDecodeError && err.problem === "line-too-long", String(err));
    assert.ok(pulled() < bound, `pulled ${pulled()} bytes`);
  }
  const listCases: Array<[string, string]> = [
    ['{"items":[{"data":"', "y".repeat(1024)],
    ['{"items":[', "[".repeat(1024)],
    ['{"metadata":{"a":"', "z".repeat(1000) + "日本"],
    ['{"', "k".repeat(1024)], // a key that never ends
  ];
  for (const [first, chunk] of listCases) {
    const { body, pulled } = endless(first, chunk);
    const err = await decodeListStream(body, { maxItemLength: max }).catch((e) => e);
    assert.ok(err instanceof ListDecodeError && err.problem === "too-long", `${first}: ${err}`);
    assert.ok(pulled() < bound, `pulled ${pulled()} bytes`);
  }
});
