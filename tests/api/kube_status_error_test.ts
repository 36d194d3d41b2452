import assert from "node:assert/strict";
import { inspect } from "node:util";
import { test } from "../_test.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { asStatus, MALFORMED_STATUSES } from "./_malformed_statuses.ts";

test("KubeStatusError never throws on a malformed Status: construction, message, causes, inspect", () => {
  for (const [what, status] of MALFORMED_STATUSES) {
    const err = new KubeStatusError({ code: 500, request: "GET /x", status: asStatus(status) });
    assert.equal(typeof err.message, "string", what);
    assert.equal(typeof err.reason, "string", what);
    assert.ok(Array.isArray(err.causes), what);
    for (const c of err.causes) assert.equal(typeof c, "string", what);
    assert.equal(err.retryAfterMs, undefined, what);
    assert.equal(typeof inspect(err), "string", what);
    assert.equal(err.status, status, `${what}: the Status is kept as received`);
  }
});

test("KubeStatusError.fromStatus never throws and takes the code only when it is 400 to 599", () => {
  for (const [what, status] of MALFORMED_STATUSES) {
    const err = KubeStatusError.fromStatus(status, { request: "GET /x" });
    assert.ok(err instanceof KubeStatusError, what);
    assert.equal(err.code, 500, `${what}: falls back to 500`);
  }
  const cases: Array<[unknown, number]> = [
    [410, 410],
    [429, 429],
    [504, 504],
    [400, 400],
    [599, 599],
    [200, 500],
    [302, 500],
    [600, 500],
    [410.5, 500],
    ["410", 500],
    [undefined, 500],
  ];
  for (const [code, want] of cases) {
    assert.equal(KubeStatusError.fromStatus({ kind: "Status", code }).code, want, String(code));
  }
  assert.equal(KubeStatusError.fromStatus({ code: "x" }, { fallbackCode: 503 }).code, 503);
  const expired = KubeStatusError.fromStatus({
    kind: "Status",
    status: "Failure",
    reason: "Expired",
    message: "too old",
    code: 410,
    details: { retryAfterSeconds: 2 },
  }, { request: "GET /api/v1/pods" });
  assert.equal(expired.message, "GET /api/v1/pods: 410 Expired: too old");
  assert.equal(expired.retryAfterMs, 2000);
});

test("KubeStatusError reads only string reasons and causes, and strings as messages", () => {
  const err = new KubeStatusError({
    code: 504,
    status: asStatus({
      reason: "Timeout",
      message: "Too large resource version",
      details: {
        causes: [null, 1, { reason: 2 }, { reason: "" }, { reason: "ResourceVersionTooLarge" }],
      },
    }),
  });
  assert.deepEqual(err.causes, ["ResourceVersionTooLarge"]);
  assert.equal(err.message, "504 Timeout: Too large resource version");
  const odd = new KubeStatusError({
    code: 500,
    status: asStatus({ reason: 7, message: { a: 1 } }),
    bodyDescription: "described instead",
  });
  assert.equal(odd.reason, "");
  assert.equal(odd.message, "500: described instead");
});

test("KubeStatusError takes details.retryAfterSeconds only when it is a finite non-negative number", () => {
  const withSeconds = (retryAfterSeconds: unknown) =>
    new KubeStatusError({ code: 429, status: asStatus({ details: { retryAfterSeconds } }) })
      .retryAfterMs;
  assert.equal(withSeconds(3), 3000);
  assert.equal(withSeconds(0), 0);
  assert.equal(withSeconds(1.5), 1500);
  for (const bad of ["3", "soon", NaN, -5, Infinity, {}, [], null, true]) {
    assert.equal(withSeconds(bad), undefined, String(bad));
  }
  // An explicit (header) value wins; an invalid one falls back to the Status's.
  const status = asStatus({ details: { retryAfterSeconds: 3 } });
  assert.equal(new KubeStatusError({ code: 429, status, retryAfterMs: 500 }).retryAfterMs, 500);
  for (const bad of [NaN, -1, Infinity, "700" as unknown as number]) {
    assert.equal(new KubeStatusError({ code: 429, status, retryAfterMs: bad }).retryAfterMs, 3000);
    assert.equal(new KubeStatusError({ code: 429, retryAfterMs: bad }).retryAfterMs, undefined);
  }
});

test("KubeStatusError reads a code that is not a number as 500 and caps a huge message", () => {
  const err = new KubeStatusError({ code: "410" as unknown as number });
  assert.equal(err.code, 500);
  const long = new KubeStatusError({ code: 500, status: { message: "x".repeat(100_000) } });
  assert.ok(long.message.length < 1100, `${long.message.length} characters`);
  assert.equal(long.status?.message?.length, 100_000, "the Status itself is kept whole");
});
