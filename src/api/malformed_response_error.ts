/**
 * An answer that parsed but cannot be used as what it claims to be: a list
 * without an `items` array or with a `resourceVersion` that is not a
 * string, a list item or watch object that is not an object with a
 * `metadata` object, a `ListerWatcher` that returned something that is
 * not a list or an async iterable. The message names the problem and the
 * place, never object content.
 *
 * @example
 * ```ts
 * import { MalformedResponseError } from "./malformed_response_error.ts";
 * const err = new MalformedResponseError("list", "item 3 is null, not an object");
 * console.log(err.message); // malformed list: item 3 is null, not an object
 * console.log(err.where, err.problem); // list item 3 is null, not an object
 * ```
 */
export class MalformedResponseError extends Error {
  /** What was malformed: `"list"`, `"list item"`, `"watch event"`, `"lister-watcher"`. */
  readonly where: string;
  /** The problem, in words. */
  readonly problem: string;

  /**
   * Creates the error; its message is `malformed <where>: <problem>`.
   *
   * @param where What was malformed (`"list"`, `"watch event"`, ...).
   * @param problem The problem, in words; must not quote object content.
   */
  constructor(where: string, problem: string) {
    super(`malformed ${where}: ${problem}`);
    this.name = "MalformedResponseError";
    this.where = where;
    this.problem = problem;
  }
}
