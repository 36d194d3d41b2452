/**
 * List bodies a broken server or proxy sends with status 200, each with the
 * typed error a list must fail with: shared by the Reflector's hostile suite
 * and `catchUp`'s.
 *
 * @module
 */
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import type { Fault } from "../../testkit.ts";

/** A `KubeStatusError` with `code` (and a message matching `message`). */
export const isStatusError = (code: number, message?: RegExp) => (e: unknown) =>
  e instanceof KubeStatusError && e.code === code && (!message || message.test(e.message));

/** A Status with status Failure, as an etcd timeout gives it. */
export const STATUS_FAILURE = JSON.stringify({
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "etcdserver: request timed out",
  reason: "InternalError",
  details: { causes: [{ message: "etcdserver: request timed out" }] },
  code: 500,
});

/** One bad list answer and what it must fail with. */
export interface BadList {
  name: string;
  fault: Fault;
  expected: (e: unknown) => boolean;
}

/** Bodies that are not a usable list: HTML, empty, `[]`, a Status, a bad resourceVersion, truncated. */
export const BAD_LIST_BODIES: BadList[] = [
  {
    name: "an HTML page with status 200",
    fault: {
      kind: "raw",
      data: "<html><head><title>Login</title></head><body>Sign in</body></html>\n",
    },
    expected: isStatusError(200, /not valid JSON/),
  },
  {
    name: "an empty 200 body",
    fault: { kind: "raw", data: "" },
    expected: isStatusError(200, /not valid JSON/),
  },
  {
    name: "`[]` as the list body",
    fault: { kind: "raw", data: "[]" },
    expected: isStatusError(200, /not a Kubernetes list/),
  },
  {
    name: "a Status with status Failure as the 200 list body",
    fault: { kind: "raw", data: STATUS_FAILURE },
    expected: (e) =>
      isStatusError(500, /etcdserver: request timed out/)(e) &&
      (e as KubeStatusError).reason === "InternalError",
  },
  {
    name: "a list whose metadata.resourceVersion is a number",
    fault: {
      kind: "raw",
      data:
        '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":12},"items":[]}',
    },
    expected: isStatusError(200, /resourceVersion is not a string/),
  },
  {
    name: "a list without metadata.resourceVersion",
    fault: {
      kind: "raw",
      data: '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[]}',
    },
    expected: (e) =>
      e instanceof MalformedResponseError ||
      isStatusError(200, /resourceVersion/)(e),
  },
  {
    name: "a truncated list body",
    fault: { kind: "close" }, // half the real body, then a clean end
    expected: isStatusError(200, /not valid JSON \(truncated/),
  },
];
