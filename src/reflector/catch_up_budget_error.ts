/**
 * `catchUp`'s budget ran out before it had anything to answer with: the
 * lister-watcher's identity, the target version or the checkpoint could not
 * be read in time (a server that does not answer, a storage that hangs, a
 * list refused until the budget was gone). Nothing was saved. `cause` is
 * the last error reported before the budget ran out, when there was one.
 * (Once the checkpoint is read, a budget that runs out ends the catch-up
 * with `complete: false` instead, and what was applied is saved.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CatchUpBudgetError } from "../../mod.ts";
 *
 * const err = new CatchUpBudgetError("cms", 2_000, "the target version", new Error("503"));
 * assert.equal(err.key, "cms");
 * assert.match(err.message, /budget of 2000 ms ran out before the target version was read/);
 * ```
 */
export class CatchUpBudgetError extends Error {
  /** The checkpoint's key. */
  readonly key: string;
  /** The budget that ran out, in ms. */
  readonly budgetMs: number;

  /**
   * Creates the error; the message names the key, the budget, what could
   * not be read in time and the last error reported.
   *
   * @param key The checkpoint's key.
   * @param budgetMs The budget, in ms.
   * @param stage What could not be read in time.
   * @param cause The last error reported before the budget ran out.
   */
  constructor(key: string, budgetMs: number, stage: string, cause?: unknown) {
    const why = cause instanceof Error ? ` (last error: ${cause.message})` : "";
    super(
      `catchUp ${
        JSON.stringify(key)
      }: the budget of ${budgetMs} ms ran out before ${stage} was read${why}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "CatchUpBudgetError";
    this.key = key;
    this.budgetMs = budgetMs;
  }
}
