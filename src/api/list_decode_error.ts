import { DecodeError } from "./decode_error.ts";

/**
 * What was wrong with a list body (the `problem` of a
 * {@linkcode ListDecodeError}): not JSON (`syntax`), cut short
 * (`truncated`), JSON but not a list object (`shape`), an item longer
 * than `maxItemLength` (`too-long`), or bytes that are not valid UTF-8
 * (`encoding`).
 */
export type ListDecodeProblem = "syntax" | "truncated" | "shape" | "too-long" | "encoding";

/**
 * A list body that `decodeListStream` could not decode (the list body's
 * {@linkcode DecodeError}, as `WatchDecodeError` is the watch stream's). The
 * body content is never quoted (it could be a Secret); `offset` (in UTF-16
 * code units from the start of the body) and `items` (how many items had
 * been decoded) locate the problem.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DecodeError, decodeListStream, ListDecodeError } from "../../mod.ts";
 *
 * const cut = new Response('{"kind":"PodList","items":[{"metadata":{}},').body!;
 * await assert.rejects(decodeListStream(cut), (err) => {
 *   assert.ok(err instanceof ListDecodeError && err instanceof DecodeError);
 *   assert.equal(err.problem, "truncated");
 *   assert.equal(err.items, 1);
 *   return true;
 * });
 * ```
 */
export class ListDecodeError extends DecodeError<ListDecodeProblem> {
  /** Where the problem was detected, in UTF-16 code units from the start of the body. */
  readonly offset: number;
  /** How many items had been decoded before it. */
  readonly items: number;
  /**
   * Creates the error; the message describes `problem` and locates it.
   *
   * @param problem What was wrong with the body.
   * @param offset Where it was detected, in UTF-16 code units from the start of the body.
   * @param items How many items had been decoded before it.
   */
  constructor(problem: ListDecodeProblem, offset: number, items: number) {
    const what = {
      syntax: "not valid JSON",
      truncated: "ends before the list is complete",
      shape: "not a list object (a JSON object whose items, if any, are an array)",
      "too-long": "an item exceeds the maximum item size",
      encoding: "not valid UTF-8",
    }[problem];
    super(problem, `malformed list body: ${what} (at character ${offset}, after ${items} items)`);
    this.name = "ListDecodeError";
    this.offset = offset;
    this.items = items;
  }
}
