import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isExpired, isRetriable, isTooLargeResourceVersion } from "../../src/api/predicates.ts";
import { asStatus, MALFORMED_STATUSES } from "./_malformed_statuses.ts";

test("isExpired, isTooLargeResourceVersion and isRetriable never throw on a malformed Status", () => {
  for (const [what, status] of MALFORMED_STATUSES) {
    for (const code of [200, 410, 429, 500, 504, "504" as unknown as number]) {
      for (
        const err of [
          new KubeStatusError({ code, status: asStatus(status) }),
          KubeStatusError.fromStatus(status),
        ]
      ) {
        assert.equal(typeof isExpired(err), "boolean", what);
        assert.equal(typeof isTooLargeResourceVersion(err), "boolean", what);
        assert.equal(typeof isRetriable(err), "boolean", what);
      }
    }
  }
});

test("predicates judge a malformed Status by its well-formed parts only", () => {
  const err = (code: number, status: unknown) =>
    new KubeStatusError({ code, status: asStatus(status) });
  assert.equal(isExpired(err(500, { reason: ["Expired"] })), false);
  assert.equal(isExpired(err(500, { reason: "Expired" })), true);
  assert.equal(
    isTooLargeResourceVersion(err(504, { message: ["too large resource version"] })),
    false,
  );
  assert.equal(
    isTooLargeResourceVersion(
      err(504, { details: { causes: [null, { reason: "ResourceVersionTooLarge" }] } }),
    ),
    true,
  );
  assert.equal(
    isTooLargeResourceVersion(
      err(504, { details: { causes: { reason: "ResourceVersionTooLarge" } } }),
    ),
    false,
  );
  assert.equal(isRetriable(KubeStatusError.fromStatus({ code: "404" })), true, "500: retriable");
  assert.equal(isRetriable(KubeStatusError.fromStatus({ code: 404 })), false);
});
