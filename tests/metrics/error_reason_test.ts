import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  KubeNetworkError,
  ListTimeoutError,
  ShortWatchError,
  UnexpectedKindError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { ERROR_REASONS, errorReason } from "../../src/metrics/error_reason.ts";

test("errorReason maps every error to one of a fixed set of labels", () => {
  const cases: [unknown, string][] = [
    [new KubeStatusError({ code: 410 }), "expired"],
    [new KubeStatusError({ code: 200, status: { reason: "Expired" } }), "expired"],
    [new KubeStatusError({ code: 429 }), "status_4xx"],
    [new KubeStatusError({ code: 403 }), "status_4xx"],
    [new KubeStatusError({ code: 504 }), "status_5xx"],
    [new KubeNetworkError("GET /api", new TypeError("fetch failed")), "network"],
    [new WatchDecodeError("syntax", 1, 10), "decode"],
    [new WatchIdleTimeoutError(1000), "idle_timeout"],
    [new ShortWatchError(3), "short_watch"],
    [new ListTimeoutError(5), "timeout"],
    [new UnexpectedKindError("Pod", "Secret", "a"), "other"],
    ["a string", "other"],
    [undefined, "other"],
  ];
  for (const [err, reason] of cases) {
    assert.equal(errorReason(err), reason);
    assert.ok((ERROR_REASONS as readonly string[]).includes(reason));
  }
});
