import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { fmix32, fnv1a, ownerOf } from "../../src/shard/_rendezvous.ts";

const keys = (n: number) => Array.from({ length: n }, (_, i) => `default/object-${i}`);

test("rendezvous: FNV-1a over UTF-8 bytes matches the published values, and TextEncoder's bytes", () => {
  // deno-fmt-ignore
  const rows: [string, number][] = [
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["foobar", 0xbf9cf968],
  ];
  for (const [s, h] of rows) assert.equal(fnv1a(s), h, JSON.stringify(s));
  for (const s of ["é😀x", "ns/ü", "\ud800 lone", "日本"]) {
    let h = 0x811c9dc5;
    for (const b of new TextEncoder().encode(s)) h = Math.imul(h ^ b, 0x01000193);
    assert.equal(fnv1a(s), h >>> 0, s);
  }
  assert.equal(fmix32(0), 0);
  assert.notEqual(fmix32(1), 1);
});

test("rendezvous: owners are fixed by the inputs alone (the same in every process and runtime)", () => {
  // deno-fmt-ignore
  const rows: [string, string[], string | undefined][] = [
    ["default/a", ["a", "b", "c"], "b"],
    ["default/b", ["a", "b", "c"], "b"],
    ["kube-system/coredns", ["a", "b", "c"], "c"],
    ["ns/ü", ["a", "b", "c"], "a"],
    ["x", ["a", "b", "c"], "b"],
    ["default/a", ["pod-0", "pod-1", "pod-2", "pod-3"], "pod-3"],
    ["kube-system/coredns", ["pod-0", "pod-1", "pod-2", "pod-3"], "pod-1"],
    ["ns/ü", ["pod-0", "pod-1", "pod-2", "pod-3"], "pod-0"],
    ["anything", ["only"], "only"],
    ["anything", [], undefined],
  ];
  for (const [key, members, owner] of rows) {
    assert.equal(ownerOf(key, members), owner, `${key} over ${members}`);
    // the order of the members does not matter
    assert.equal(ownerOf(key, [...members].reverse()), owner, `${key} over reversed ${members}`);
  }
});

test("rendezvous: 10k keys spread evenly over 3 members (each within ±10% of a third)", () => {
  for (
    const members of [["a", "b", "c"], ["replica-a", "replica-b", "replica-c"], [
      "10.0.0.1",
      "10.0.0.2",
      "10.0.0.3",
    ]]
  ) {
    const counts = new Map<string, number>();
    for (const key of keys(10_000)) {
      const owner = ownerOf(key, members)!;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    for (const m of members) {
      const n = counts.get(m) ?? 0;
      assert.ok(Math.abs(n - 10_000 / 3) <= 10_000 / 3 * 0.1, `${m}: ${n} of 10000`);
    }
  }
});

test("rendezvous: adding a member moves keys only to it; removing one moves only its keys", () => {
  const before = ["a", "b", "c"];
  const added = ["a", "b", "c", "d"];
  let moved = 0;
  for (const key of keys(10_000)) {
    const was = ownerOf(key, before);
    const now = ownerOf(key, added);
    if (now !== was) {
      assert.equal(now, "d", `${key} moved from ${was} to ${now}`);
      moved++;
    }
    const removed = ownerOf(key, ["a", "c"]);
    if (was !== "b") assert.equal(removed, was, `${key} of ${was} moved when b left`);
    else assert.ok(removed === "a" || removed === "c");
  }
  assert.ok(moved > 2_000 && moved < 3_000, `${moved} keys moved to the fourth member`);
});

test("rendezvous: a member array changed in place is hashed anew", () => {
  const members = ["a", "b", "c"];
  const owners = keys(100).map((k) => ownerOf(k, members));
  members[1] = "z";
  const after = keys(100).map((k) => ownerOf(k, members));
  assert.ok(!after.includes("b"));
  assert.deepEqual(after, keys(100).map((k) => ownerOf(k, ["a", "z", "c"])));
  assert.notDeepEqual(owners, after);
});
