import { KubeStatusError, type KubeStatusErrorOptions } from "./kube_status_error.ts";

/**
 * A write the API server refused with 409 `Conflict`: the object changed
 * since it was read (a `replace` or patch carrying a stale
 * `metadata.resourceVersion`, or a failed delete precondition). Re-read the
 * object, apply the change again, and retry: {@linkcode retryOnConflict}
 * does exactly that. `KubeClient` rejects with this subclass of
 * {@linkcode KubeStatusError} for every 409 except `AlreadyExists` (a
 * create whose name is taken is no conflict that a retry would fix; see
 * {@linkcode isAlreadyExists}). Test with `instanceof` or
 * {@linkcode isConflict}.
 */
export class KubeConflictError extends KubeStatusError {
  /** Creates the error; the options are those of {@linkcode KubeStatusError}. */
  constructor(options: KubeStatusErrorOptions) {
    super(options);
    this.name = "KubeConflictError";
  }
}

/**
 * True for a 409 that means "modified since you read it" (client-go's
 * `errors.IsConflict`): a {@linkcode KubeConflictError}, or any
 * {@linkcode KubeStatusError} with code 409 whose reason is not
 * `AlreadyExists`. The condition {@linkcode retryOnConflict} retries on.
 */
export function isConflict(err: unknown): boolean {
  if (err instanceof KubeConflictError) return true;
  return err instanceof KubeStatusError && err.code === 409 && err.reason !== "AlreadyExists";
}
