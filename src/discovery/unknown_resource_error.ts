/**
 * The error of a resource name the server does not know.
 *
 * @module
 */

/**
 * A resource name the server does not have (after one refresh of the
 * discovery), in kubectl's words, with the closest names it has:
 * `the server doesn't have a resource type "deplyo" (did you mean deploy, deployments?)`.
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
 * ```
 */
export class UnknownResourceError extends Error {
  /** The name as given. */
  readonly input: string;
  /** The closest names the server has, best first (maybe none). */
  readonly suggestions: readonly string[];

  /** Makes the error of `input`, suggesting `suggestions`. */
  constructor(input: string, suggestions: readonly string[] = []) {
    const hint = suggestions.length > 0 ? ` (did you mean ${suggestions.join(", ")}?)` : "";
    super(`the server doesn't have a resource type ${JSON.stringify(input)}${hint}`);
    this.name = "UnknownResourceError";
    this.input = input;
    this.suggestions = Object.freeze([...suggestions]);
  }
}
