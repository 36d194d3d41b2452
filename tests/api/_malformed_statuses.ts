/**
 * Malformed `Status` bodies a hostile or broken server (or proxy) can send,
 * as JSON would decode them: the table the api tests run everything over.
 *
 * @module
 */
import type { Status } from "../../src/api/types.ts";

/** `[description, status]` pairs; every one must be survivable. */
export const MALFORMED_STATUSES: Array<[string, unknown]> = [
  ["causes is an object", { kind: "Status", details: { causes: { reason: "x" } } }],
  ["causes holds null", { kind: "Status", details: { causes: [null] } }],
  ["causes holds numbers and strings", { kind: "Status", details: { causes: [1, "two", true] } }],
  ["causes holds arrays", { kind: "Status", details: { causes: [["ResourceVersionTooLarge"]] } }],
  ["causes is a string", { kind: "Status", details: { causes: "ResourceVersionTooLarge" } }],
  ["causes is null", { kind: "Status", details: { causes: null } }],
  ["a cause's reason is a number", { kind: "Status", details: { causes: [{ reason: 42 }] } }],
  ["a cause's reason is an object", {
    kind: "Status",
    details: { causes: [{ reason: { toString: 1, valueOf: 1 } }] },
  }],
  ["code is a string", { kind: "Status", code: "410", reason: "Gone?" }],
  ["code is an object", { kind: "Status", code: { valueOf: 1, toString: 1 } }],
  ["code is null", { kind: "Status", code: null }],
  ["code is NaN-like", { kind: "Status", code: -1 }],
  ["details is null", { kind: "Status", details: null }],
  ["details is a string", { kind: "Status", details: "nope" }],
  ["details is an array", { kind: "Status", details: [{ causes: [] }] }],
  ["message is a number", { kind: "Status", message: 5 }],
  ["message is an object without toString", {
    kind: "Status",
    message: { toString: 1, valueOf: 1 },
  }],
  ["message is an array", { kind: "Status", message: ["too large resource version"] }],
  ["reason is a number", { kind: "Status", reason: 410 }],
  ["reason is an object without toString", { kind: "Status", reason: { toString: null } }],
  ["reason is null", { kind: "Status", reason: null }],
  ["retryAfterSeconds is a string", { kind: "Status", details: { retryAfterSeconds: "3" } }],
  ["retryAfterSeconds is an object", { kind: "Status", details: { retryAfterSeconds: {} } }],
  ["retryAfterSeconds is negative", { kind: "Status", details: { retryAfterSeconds: -5 } }],
  ["retryAfterSeconds is huge", { kind: "Status", details: { retryAfterSeconds: 1e308 } }],
  ["everything wrong at once", {
    kind: 5,
    status: {},
    code: "x",
    reason: [],
    message: { valueOf: 1, toString: 1 },
    details: { causes: { 0: null }, retryAfterSeconds: "soon" },
  }],
  ["an empty object", {}],
  ["null", null],
  ["a string", "Status"],
  ["a number", 410],
  ["an array", [{ kind: "Status" }]],
];

/** A malformed entry typed as what a careless caller would pass. */
export function asStatus(value: unknown): Status {
  return value as Status;
}
