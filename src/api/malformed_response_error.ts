/**
 * An answer that parsed but cannot be used as what it claims to be: a list
 * without an `items` array or with a `resourceVersion` that is not a
 * string, a list item or watch object that is not an object with a
 * `metadata` object, a `ListerWatcher` that returned something that is
 * not a list or an async iterable. The message names the problem and the
 * place, never object content.
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
