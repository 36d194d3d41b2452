/**
 * The error of a resource name the server does not know.
 *
 * @module
 */
import type { DiscoveryFailure } from "./api_resource.ts";

/** How many failed group versions a message names (the field has them all). */
const NAMED_FAILURES = 3;

/**
 * A resource name the server does not have (after one refresh of the
 * discovery), in kubectl's words, with the closest names it has:
 * `the server doesn't have a resource type "deplyo" (did you mean deploy, deployments?)`.
 * When some group versions could not be read (an aggregated API that is
 * down), the name may be one of theirs: the message says which failed and
 * why, as kubectl warns (`... (discovery failed for metrics.k8s.io/v1beta1:
 * the server is currently unable to handle the request)`), and
 * `failedGroups` lists them; such an error does not prove a typo.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { UnknownResourceError } from "../../mod.ts";
 *
 * const err = new UnknownResourceError("deplyo", ["deploy", "deployments"]);
 * assert.equal(
 *   err.message,
 *   'the server doesn\'t have a resource type "deplyo" (did you mean deploy, deployments?)',
 * );
 * assert.deepEqual(err.suggestions, ["deploy", "deployments"]);
 * assert.deepEqual(err.failedGroups, []);
 *
 * const down = new UnknownResourceError("leases", [], [
 *   { groupVersion: "coordination.k8s.io/v1", error: new Error("service unavailable") },
 * ]);
 * assert.equal(
 *   down.message,
 *   'the server doesn\'t have a resource type "leases" (discovery failed for coordination.k8s.io/v1: service unavailable)',
 * );
 * ```
 */
export class UnknownResourceError extends Error {
  /** The name as given. */
  readonly input: string;
  /** The closest names the server has, best first (maybe none). */
  readonly suggestions: readonly string[];
  /**
   * The group versions whose discovery failed (empty when every one was
   * read): the name may belong to one of them.
   */
  readonly failedGroups: readonly DiscoveryFailure[];

  /**
   * Makes the error of `input`, suggesting `suggestions`; `failedGroups`:
   * the group versions the discovery could not read (default: none).
   */
  constructor(
    input: string,
    suggestions: readonly string[] = [],
    failedGroups: readonly DiscoveryFailure[] = [],
  ) {
    const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(", ")}?)` : "";
    super(
      `the server doesn't have a resource type ${JSON.stringify(input)}${hint}${
        failureHint(failedGroups)
      }`,
    );
    this.name = "UnknownResourceError";
    this.input = input;
    this.suggestions = Object.freeze([...suggestions]);
    this.failedGroups = Object.freeze([...failedGroups]);
  }
}

/** ` (discovery failed for g/v: why; g2/v: why)`, or nothing. */
function failureHint(failures: readonly DiscoveryFailure[]): string {
  if (failures.length === 0) return "";
  const named = failures.slice(0, NAMED_FAILURES).map((f) =>
    `${f.groupVersion}: ${f.error?.message || f.error?.name || "unknown error"}`
  );
  const more = failures.length > NAMED_FAILURES
    ? ` and ${failures.length - NAMED_FAILURES} more`
    : "";
  return ` (discovery failed for ${named.join("; ")}${more})`;
}
