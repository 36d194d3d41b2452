import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { kvKeys, PART_SUFFIX_BYTES, PIECE_SUFFIX_BYTES } from "../../src/checkpoint/_kv_keys.ts";

test("kvKeys names manifests and parts after the prefix and the key", () => {
  const keys = kvKeys("ckpt/", 512);
  assert.equal(keys.manifestKey("cms"), "ckpt/cms");
  assert.equal(keys.partKey("cms", "0123456789abcdef", 12), "ckpt/cms/parts/0123456789abcdef/12");
  assert.throws(() => keys.partKey("cms", "0123456789abcdef", 10_000_000), RangeError);
  assert.equal(PIECE_SUFFIX_BYTES, "/base/0123456789abcdef".length);
  assert.equal(PART_SUFFIX_BYTES, "/parts/0123456789abcdef/9999999".length);
});

test("kvKeys refuses a key whose longest stored key passes the limit (table)", () => {
  const room = PIECE_SUFFIX_BYTES + PART_SUFFIX_BYTES; // 53
  // [prefix, key, maxKeyBytes, the longest stored key, or undefined when it fits]
  const rows: [string, string, number, number | undefined][] = [
    ["", "k".repeat(512 - room), 512, undefined],
    ["", "k".repeat(513 - room), 512, 513],
    ["p/", "k".repeat(510 - room), 512, undefined],
    ["p/", "k".repeat(511 - room), 512, 513],
    ["é/", "k".repeat(509 - room), 512, undefined], // the prefix counts in UTF-8 bytes
    ["", "日".repeat(153), 512, undefined], // 459 bytes + 53 = 512
    ["", "日".repeat(154), 512, 515],
    ["", "😀".repeat(115), 512, 513],
    // a checkpoint's piece needs no room for another piece's suffix
    ["", "k".repeat(512 - room) + "/base/0123456789abcdef", 512, undefined],
    ["", "k".repeat(512 - room) + "/log/0123456789abcdef", 512, undefined],
    ["", "k".repeat(512 - room) + "/page/0123456789abcdef", 512, undefined],
    ["", "k".repeat(513 - room) + "/base/0123456789abcdef", 512, 513],
    ["", "k".repeat(512 - room) + "/base/0123456789ABCDEF", 512, 534], // not a piece's name
    ["", "k", 64, undefined],
    ["", "k".repeat(12), 64, 65],
  ];
  for (const [prefix, key, max, longest] of rows) {
    const check = () => kvKeys(prefix, max).checkKey(key);
    const name = `${prefix}+${key.length} chars of ${key[0]} (max ${max})`;
    if (longest === undefined) check();
    else {
      assert.throws(check, (err) => {
        assert.ok(err instanceof TypeError, name);
        assert.match(
          err.message,
          new RegExp(`would be ${longest} bytes, over maxKeyBytes \\(${max}\\)`),
          name,
        );
        return true;
      }, name);
    }
  }
  for (const bad of ["", undefined, 7]) {
    assert.throws(() => kvKeys("", 512).checkKey(bad), TypeError);
  }
});
