import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  retryAfterMsFromHeader,
  retryAfterMsFromSeconds,
  retryAfterMsFromStatus,
} from "../../src/api/retry_after.ts";
import { MALFORMED_STATUSES } from "./_malformed_statuses.ts";

test("retryAfterMsFromHeader takes delay seconds and HTTP dates, and ignores everything else", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const cases: Array<[string | null | undefined, number | undefined]> = [
    ["3", 3000],
    [" 3 ", 3000],
    ["0", 0],
    ["1.5", 1500],
    ["120", 120_000],
    ["Thu, 01 Jan 2026 00:00:10 GMT", 10_000],
    ["Thursday, 01-Jan-26 00:00:10 GMT", 10_000],
    ["Thu Jan  1 00:00:10 2026", 10_000],
    ["Sun, 06 Nov 1994 08:49:37 GMT", 0], // in the past
    ["soon", undefined],
    ["NaN", undefined],
    ["-5", undefined],
    ["-0", undefined],
    ["+5", undefined],
    ["Infinity", undefined],
    ["1e3", undefined],
    ["0x10", undefined],
    ["3, 4", undefined], // a repeated header
    ["5 seconds", undefined],
    ["2026-01-01", undefined],
    ["1", 1000],
    ["", undefined],
    ["   ", undefined],
    [null, undefined],
    [undefined, undefined],
    ["9".repeat(400), undefined], // finite as text, infinite as a number
  ];
  for (const [value, want] of cases) {
    assert.equal(retryAfterMsFromHeader(value, now), want, JSON.stringify(value));
  }
});

test("retryAfterMsFromSeconds and retryAfterMsFromStatus take only finite non-negative numbers", () => {
  for (
    const bad of [
      "3",
      "soon",
      "NaN",
      NaN,
      -5,
      -0.001,
      Infinity,
      -Infinity,
      {},
      [3],
      null,
      true,
      1e308,
    ]
  ) {
    assert.equal(retryAfterMsFromSeconds(bad), undefined, String(bad));
    assert.equal(
      retryAfterMsFromStatus({ details: { retryAfterSeconds: bad } }),
      undefined,
      String(bad),
    );
  }
  assert.equal(retryAfterMsFromSeconds(0), 0);
  assert.equal(retryAfterMsFromSeconds(2.5), 2500);
  assert.equal(retryAfterMsFromStatus({ kind: "Status", details: { retryAfterSeconds: 7 } }), 7000);
  assert.equal(retryAfterMsFromStatus({ kind: "Status" }), undefined);
  for (const [what, status] of MALFORMED_STATUSES) {
    assert.equal(retryAfterMsFromStatus(status), undefined, what);
  }
});
