import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Fnv1a4 } from "../../src/checkpoint/_fnv1a.ts";

const digest = (...parts: Uint8Array[]) => {
  const h = new Fnv1a4();
  for (const p of parts) h.update(p);
  return h.digest();
};

test("the 4-lane FNV-1a checksum puts byte i in lane i % 4, each lane plain FNV-1a 32", () => {
  const enc = new TextEncoder();
  // FNV-1a 32 of "a" is e40c292c, of "" 811c9dc5
  assert.equal(digest(enc.encode("a")), "e40c292c" + "811c9dc5".repeat(3));
  assert.equal(digest(enc.encode("aaaa")), "e40c292c".repeat(4));
  assert.equal(digest(), "811c9dc5".repeat(4));
});

test("the 4-lane FNV-1a checksum does not depend on how the input is cut", () => {
  const bytes = new Uint8Array(1000).map((_, i) => (i * 37 + 11) % 256);
  const whole = digest(bytes);
  for (let a = 0; a < 12; a++) {
    for (let b = a; b < 40; b += 3) {
      assert.equal(
        digest(bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)),
        whole,
        `${a} ${b}`,
      );
    }
  }
});

test("the 4-lane FNV-1a checksum changes with any single byte changed", () => {
  const bytes = new Uint8Array(300).map((_, i) => i % 256);
  const whole = digest(bytes);
  for (let i = 0; i < bytes.length; i++) {
    for (const mask of [1, 0x80, 0xff]) {
      const changed = bytes.slice();
      changed[i] ^= mask;
      assert.notEqual(digest(changed), whole, `byte ${i}`);
    }
  }
});
