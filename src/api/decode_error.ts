/**
 * A response body that cannot be decoded: {@linkcode ListDecodeError} for a
 * list body, {@linkcode WatchDecodeError} for a watch stream. `problem` says
 * what was wrong (`syntax`, `shape`, `truncated`, `encoding`, or too long),
 * each subclass's own fields say where. The content itself is never quoted
 * (it could be a Secret). Catch this class to handle both alike: either way
 * the server (or something between it and you) sent bytes that are not
 * what Kubernetes sends, and asking again is the only remedy.
 *
 * @example One handler for a bad list body and a bad watch line
 * ```ts
 * import assert from "node:assert/strict";
 * import { DecodeError, decodeListStream, watchStream } from "../../mod.ts";
 *
 * const body = (text: string) => new Response(text).body!;
 * const failures: DecodeError[] = [];
 * try {
 *   await decodeListStream(body("<html>502 Bad Gateway</html>"));
 * } catch (err) {
 *   if (err instanceof DecodeError) failures.push(err);
 * }
 * try {
 *   await watchStream(body('{"type":"ADDED"\n')).next();
 * } catch (err) {
 *   if (err instanceof DecodeError) failures.push(err);
 * }
 * assert.deepEqual(failures.map((e) => [e.name, e.problem]), [
 *   ["ListDecodeError", "syntax"],
 *   ["WatchDecodeError", "syntax"],
 * ]);
 * ```
 */
export class DecodeError<P extends string = string> extends Error {
  /** What was wrong with the body (each subclass narrows it to its own problems). */
  readonly problem: P;

  /**
   * Creates the error.
   *
   * @param problem What was wrong with the body.
   * @param message Says what and where, never quoting the content.
   */
  constructor(problem: P, message: string) {
    super(message);
    this.name = "DecodeError";
    this.problem = problem;
  }
}
