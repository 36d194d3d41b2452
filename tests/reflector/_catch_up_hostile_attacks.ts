/**
 * The attacks of `catch_up_hostile_test.ts`, as tables: the Reflector's
 * hostile suite's poison lines, refused watches and bad list bodies, each
 * with the typed error `catchUp` must report for it.
 *
 * @module
 */
import { BAD_LIST_BODIES, isStatusError, STATUS_FAILURE } from "./_bad_list_bodies.ts";
import assert from "node:assert/strict";
import { configMap } from "../_harness.ts";
import { NS } from "./_catch_up_hostile_harness.ts";
import {
  KubeNetworkError,
  WatchDecodeError,
  type WatchDecodeProblem,
} from "../../src/api/errors.ts";
import type { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import { RequestRefusedError } from "../../src/api/request_refused_error.ts";
import type { Fault } from "../../testkit.ts";

export const isDecodeError = (problem: WatchDecodeProblem) => (e: unknown) =>
  e instanceof WatchDecodeError && e.problem === problem;
export { isStatusError };

export const BIG_LINE = (() => {
  const object = { ...configMap("huge", NS), data: { blob: "x".repeat(6_000) } };
  object.metadata = { ...object.metadata, resourceVersion: "999" };
  return JSON.stringify({ type: "ADDED", object }) + "\n";
})();

export const enc = new TextEncoder();

export const POISON: Array<{
  name: string;
  fault: Fault;
  /** Poisons every watch, not only those from the checkpoint's version. */
  everyWatch?: boolean;
  expected: (e: unknown) => boolean;
  storage?: "file";
}> = [
  {
    name: "a line that is not JSON",
    fault: { kind: "raw", data: "this is not json {]\n", then: "close" },
    expected: isDecodeError("syntax"),
  },
  {
    name: "an ADDED event whose object has no metadata",
    fault: { kind: "raw", data: '{"type":"ADDED","object":{"kind":"ConfigMap"}}\n', then: "close" },
    expected: (e) => isDecodeError("shape")(e) || e instanceof MalformedResponseError,
    storage: "file",
  },
  {
    name: "an event line longer than maxEventLength",
    fault: { kind: "raw", data: BIG_LINE, then: "close" },
    expected: isDecodeError("line-too-long"),
  },
  {
    name: "an event line that is not valid UTF-8",
    fault: {
      kind: "raw",
      data: new Uint8Array([
        ...enc.encode('{"type":"ADDED","object":{"metadata":{"name":"'),
        0xff,
        ...enc.encode('"}}}\n'),
      ]),
      then: "close",
    },
    expected: isDecodeError("encoding"),
  },
  {
    name: "a Status with status Failure as an ADDED event's object",
    fault: {
      kind: "raw",
      data: JSON.stringify({
        type: "ADDED",
        object: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", code: 500 },
      }) + "\n",
      then: "close",
    },
    expected: (e) => e instanceof MalformedResponseError || e instanceof WatchDecodeError,
  },
  {
    name: "an ERROR event with a 500 Status",
    fault: { kind: "error-event", code: 500 },
    everyWatch: true,
    expected: isStatusError(500, /InternalError/),
    storage: "file",
  },
  {
    name: "a watch body of NUL bytes",
    fault: { kind: "raw", data: new Uint8Array(4_096), then: "close" },
    everyWatch: true,
    expected: (e) => e instanceof WatchDecodeError,
  },
  {
    name: "a 403 (a role that may list but not watch)",
    fault: { kind: "status", code: 403 },
    everyWatch: true,
    expected: (e) =>
      e instanceof RequestRefusedError && /cannot watch configmaps in namespace fx/.test(e.message),
  },
];

export const NO_WATCH: Array<{
  name: string;
  fault: Fault;
  expected: (e: unknown) => boolean;
  check?: (errors: unknown[]) => void;
  storage?: "file";
}> = [
  {
    name: "503 with an HTML page",
    fault: { kind: "status", code: 503, body: "html" },
    expected: isStatusError(503),
    check: (errors) => {
      const e = errors[0] as KubeStatusError;
      assert.equal(e.status, undefined, "an HTML page is not taken for a Status");
      assert.doesNotMatch(e.message, /<html|nginx/, "the page is described, not quoted");
    },
    storage: "file",
  },
  {
    name: '429 with Retry-After "soon"',
    fault: { kind: "status", code: 429, body: "text", retryAfter: "soon" },
    expected: isStatusError(429),
    check: (errors) =>
      assert.ok(errors.every((e) => (e as KubeStatusError).retryAfterMs === undefined)),
  },
  {
    name: "429 with Retry-After NaN",
    fault: { kind: "status", code: 429, retryAfterSeconds: NaN },
    expected: isStatusError(429),
    check: (errors) =>
      assert.ok(errors.every((e) => (e as KubeStatusError).retryAfterMs === undefined)),
  },
  {
    name: "429 with Retry-After -5",
    fault: { kind: "status", code: 429, retryAfterSeconds: -5 },
    expected: isStatusError(429),
    check: (errors) =>
      assert.ok(errors.every((e) => (e as KubeStatusError).retryAfterMs === undefined)),
  },
  {
    name: "a connection reset at request time",
    fault: { kind: "reset" },
    expected: (e) => e instanceof KubeNetworkError,
  },
  {
    name: "a connection reset after the headers",
    fault: { kind: "reset", afterEvents: 0 },
    expected: (e) => e instanceof KubeNetworkError,
    storage: "file",
  },
];

export { STATUS_FAILURE };

export const BAD_LISTS: Array<{ name: string; fault: Fault; expected: (e: unknown) => boolean }> = [
  {
    name: "500 with a plain-text body",
    fault: { kind: "status", code: 500, body: "text" },
    expected: isStatusError(500),
  },
  {
    name: '429 with Retry-After "soon"',
    fault: { kind: "status", code: 429, body: "text", retryAfter: "soon" },
    expected: (e) => isStatusError(429)(e) && (e as KubeStatusError).retryAfterMs === undefined,
  },
  ...BAD_LIST_BODIES,
  {
    name: "a list body that is not valid UTF-8",
    fault: {
      kind: "raw",
      data: new Uint8Array([
        ...enc.encode('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"'),
        0xc3,
        0x28,
        ...enc.encode('"},"items":[]}'),
      ]),
    },
    expected: isStatusError(200, /not valid UTF-8/),
  },
];
