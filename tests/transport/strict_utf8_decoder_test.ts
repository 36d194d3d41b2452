/**
 * `StrictUtf8Decoder` decodes exactly as a fatal `TextDecoder` reads the
 * whole input, whatever the chunking: the same text for valid UTF-8 (a
 * real U+FFFD and every U+FEFF kept), an error for invalid bytes, wherever
 * they fall, and for a body that ends inside a sequence.
 *
 * @module
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { mulberry32 } from "../_fixtures.ts";
import { StrictUtf8Decoder } from "../../src/transport/_strict_utf8_decoder.ts";

const enc = new TextEncoder();

/** What a fatal decoder makes of the whole input: the text, or "error". */
function oracle(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return "error";
  }
}

/** What StrictUtf8Decoder makes of `bytes` cut at `cuts`: the text, or "error". */
function decoded(bytes: Uint8Array, cuts: number[]): string {
  const decoder = new StrictUtf8Decoder();
  let text = "";
  let from = 0;
  try {
    for (const to of [...cuts, bytes.length]) {
      text += decoder.decode(bytes.slice(from, to));
      from = to;
    }
    decoder.end();
  } catch (err) {
    assert.ok(err instanceof TypeError, String(err));
    return "error";
  }
  return text;
}

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join(" ");

/** Sequences, valid and not, each tried alone and between ASCII. */
const SEQUENCES: Array<[string, number[]]> = [
  ["ASCII", [0x61]],
  ["2-byte é", [0xc3, 0xa9]],
  ["3-byte ✓", [0xe2, 0x9c, 0x93]],
  ["4-byte emoji", [0xf0, 0x9f, 0x98, 0x80]],
  ["a real U+FFFD", [0xef, 0xbf, 0xbd]],
  ["U+FEFF", [0xef, 0xbb, 0xbf]],
  ["U+2028", [0xe2, 0x80, 0xa8]],
  ["U+10FFFF", [0xf4, 0x8f, 0xbf, 0xbf]],
  ["a lone continuation byte", [0x80]],
  ["overlong C0 80", [0xc0, 0x80]],
  ["C1 lead", [0xc1, 0xbf]],
  ["overlong E0 80 80", [0xe0, 0x80, 0x80]],
  ["a surrogate ED A0 80", [0xed, 0xa0, 0x80]],
  ["above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ["F5 lead", [0xf5, 0x80, 0x80, 0x80]],
  ["F8 lead", [0xf8, 0x80, 0x80, 0x80]],
  ["FF", [0xff]],
  ["a 3-byte sequence cut short", [0xe2, 0x82]],
  ["a 4-byte sequence cut short", [0xf0, 0x9f, 0x98]],
  ["a lead byte alone", [0xc3]],
  ["a lead followed by ASCII", [0xe2, 0x41]],
  ["four continuation bytes", [0x80, 0x80, 0x80, 0x80]],
];

test("StrictUtf8Decoder reads every sequence, valid or not, as a fatal TextDecoder reads the whole, cut anywhere", () => {
  for (const [name, seq] of SEQUENCES) {
    for (
      const [where, parts] of [
        ["alone", seq],
        ["between ASCII", [0x7b, ...seq, 0x7d]],
        ["twice", [...seq, 0x20, ...seq]],
        ["after a 4-byte character", [0xf0, 0x9f, 0x98, 0x80, ...seq]],
      ] as Array<[string, number[]]>
    ) {
      const bytes = new Uint8Array(parts);
      const want = oracle(bytes);
      const n = bytes.length;
      const cutsList: number[][] = [[], Array.from({ length: n - 1 }, (_, i) => i + 1)];
      for (let i = 0; i <= n; i++) {
        cutsList.push([i]);
        for (let j = i; j <= n; j++) cutsList.push([i, j]);
      }
      for (const cuts of cutsList) {
        assert.equal(
          decoded(bytes, cuts),
          want,
          `${name} ${where} (${hex(bytes)}) cut at [${cuts}]`,
        );
      }
    }
  }
});

test("StrictUtf8Decoder agrees with a fatal TextDecoder on seeded random text and bytes in random chunks", () => {
  const pieces = ["a", '{"k":1}', "é", "✓", "😀", "\uFFFD", "\uFEFF", "\u2028", "\n"];
  for (const seed of [1, 2, 3, 0xc0ffee]) {
    const rand = mulberry32(seed);
    for (let round = 0; round < 300; round++) {
      let text = "";
      const size = Math.floor(rand() * 40);
      for (let i = 0; i < size; i++) text += pieces[Math.floor(rand() * pieces.length)];
      const bytes = [...enc.encode(text)];
      // a third of the inputs get random bytes put in or overwritten
      if (rand() < 0.33) {
        const hits = 1 + Math.floor(rand() * 3);
        for (let h = 0; h < hits; h++) {
          const at = Math.floor(rand() * (bytes.length + 1));
          const byte = Math.floor(rand() * 256);
          if (rand() < 0.5 && at < bytes.length) bytes[at] = byte;
          else bytes.splice(at, 0, byte);
        }
      }
      const input = new Uint8Array(bytes);
      const cuts: number[] = [];
      for (let at = 0; at < input.length; at++) if (rand() < 0.3) cuts.push(at);
      assert.equal(
        decoded(input, cuts),
        oracle(input),
        `seed ${seed} round ${round}: ${hex(input)} cut at [${cuts}]`,
      );
    }
  }
});

test("StrictUtf8Decoder keeps a real U+FFFD and U+FEFF at the start of any chunk", () => {
  const decoder = new StrictUtf8Decoder();
  assert.equal(decoder.decode(enc.encode("\uFEFFa\uFFFD")), "\uFEFFa\uFFFD");
  assert.equal(decoder.decode(enc.encode("\uFEFF")), "\uFEFF");
  decoder.end();
});

test("StrictUtf8Decoder takes any typed array or ArrayBuffer and refuses a chunk that is not bytes", () => {
  const bytes = enc.encode("héllo");
  const decoder = new StrictUtf8Decoder();
  assert.equal(decoder.decode(bytes.buffer.slice(0, 2) as unknown as Uint8Array), "h");
  assert.equal(
    decoder.decode(new DataView(bytes.buffer, 2, 2) as unknown as Uint8Array),
    "él",
  );
  assert.equal(decoder.decode(bytes.subarray(4)), "lo");
  decoder.end();
  assert.throws(() => decoder.decode("text" as unknown as Uint8Array), TypeError);
  assert.throws(() => decoder.decode(undefined as unknown as Uint8Array), TypeError);
});

test("StrictUtf8Decoder holds at most 3 bytes of an unfinished sequence, and the end refuses them", () => {
  const decoder = new StrictUtf8Decoder();
  assert.equal(decoder.decode(new Uint8Array([0x61, 0xf0])), "a");
  assert.equal(decoder.decode(new Uint8Array([0x9f])), "");
  assert.equal(decoder.decode(new Uint8Array([0x98])), "");
  assert.equal(decoder.decode(new Uint8Array([0x80, 0x62])), "😀b");
  assert.equal(decoder.decode(new Uint8Array([0xe2, 0x9c])), "");
  assert.throws(() => decoder.decode(new Uint8Array([0x41])), TypeError);
  const cut = new StrictUtf8Decoder();
  assert.equal(cut.decode(new Uint8Array([0x61, 0xe2, 0x9c])), "a");
  assert.throws(() => cut.end(), TypeError);
});

/** A Uint8Array whose slice is a view, as Node's Buffer's is. */
class ViewSlice extends Uint8Array {
  override slice(start?: number, end?: number): Uint8Array<ArrayBuffer> {
    return this.subarray(start, end) as Uint8Array<ArrayBuffer>;
  }
}

test("StrictUtf8Decoder copies the bytes it holds: a producer that reuses its buffer (Node's Buffer slices are views) changes nothing", () => {
  const decoder = new StrictUtf8Decoder();
  const first = new ViewSlice([0x41, 0xe2, 0x9c]);
  assert.equal(decoder.decode(first), "A");
  first.set([0x42, 0x43, 0x44]); // reused for the next read
  assert.equal(decoder.decode(new ViewSlice([0x93])), "✓");
  decoder.end();
  const g = globalThis as { Buffer?: { from(bytes: number[]): Uint8Array } };
  if (g.Buffer) {
    const again = new StrictUtf8Decoder();
    const chunk = g.Buffer.from([0x41, 0xe2, 0x9c]);
    assert.equal(again.decode(chunk), "A");
    chunk[2] = 0x9d;
    assert.equal(again.decode(g.Buffer.from([0x93])), "✓");
  }
});

test("StrictUtf8Decoder holds only the start of a sequence that can still be valid, and counts where failing bytes start", () => {
  const failsAt = (chunks: number[][]): number | string => {
    const decoder = new StrictUtf8Decoder();
    try {
      for (const c of chunks) decoder.decode(new Uint8Array(c));
      decoder.end();
    } catch (err) {
      assert.ok(err instanceof TypeError);
      return decoder.decodedBytes;
    }
    return "no error";
  };
  // Not a possible start (F0 80, E0 80, ED A0, F4 90, C0, C1, F5, FF): judged in its own chunk.
  for (
    const bad of [[0xf0, 0x80], [0xe0, 0x80], [0xed, 0xa0], [0xf4, 0x90], [0xc0], [0xc1], [0xf5], [
      0xff,
    ], [0xf0, 0x9f, 0x41]]
  ) {
    assert.equal(failsAt([[0x41, 0x42, ...bad], [0x80], [0x41]]), 0, `41 42 ${bad}`);
  }
  // A possible start is held and judged with the next chunk, counted from where it starts.
  assert.equal(failsAt([[0x41, 0xe2, 0x9c], [0x41]]), 1);
  assert.equal(failsAt([[0x41, 0x42], [0x43, 0xf0, 0x9f], [0x98], [0x41]]), 3);
  // A body that ends inside a sequence: where the sequence starts.
  assert.equal(failsAt([[0x41, 0x42, 0xf0, 0x9f, 0x98]]), 2);
  assert.equal(failsAt([[0x41, 0xc3, 0xa9], [0xe2, 0x9c, 0x93]]), "no error");
});

test("StrictUtf8Decoder refuses what only claims to be a buffer with a TypeError, and takes a SharedArrayBuffer", () => {
  const decoder = new StrictUtf8Decoder();
  const fakes: unknown[] = [
    { [Symbol.toStringTag]: "ArrayBuffer" },
    { [Symbol.toStringTag]: "ArrayBuffer", length: 1, 0: 0x41 },
    {
      get [Symbol.toStringTag]() {
        throw new RangeError("no");
      },
    },
    [0x41],
    null,
  ];
  for (const fake of fakes) {
    assert.throws(() => decoder.decode(fake as Uint8Array), TypeError);
  }
  if (typeof SharedArrayBuffer === "function") {
    const shared = new SharedArrayBuffer(2);
    new Uint8Array(shared).set([0x68, 0x69]);
    assert.equal(decoder.decode(shared as unknown as Uint8Array), "hi");
    assert.equal(decoder.decode(new Uint8Array(shared)), "hi");
  }
});
