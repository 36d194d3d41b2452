/**
 * A tombstone: the final state of an object that was deleted while the
 * watch was not looking (for example during a relist), so the last state
 * we know may be stale. It carries the object's store `key` and that last
 * known object (`obj`, possibly stale).
 *
 * Informers hand it to delete handlers in place of the object; key
 * functions return its `key` unchanged (see
 * {@linkcode deletionHandlingMetaNamespaceKeyFunc}). This is client-go's
 * `cache.DeletedFinalStateUnknown`.
 */
export class DeletedFinalStateUnknown<T = unknown> {
  /** The store key of the deleted object. */
  readonly key: string;
  /** The last known state of the deleted object; it may be stale. */
  readonly obj: T;

  /**
   * Creates a tombstone.
   *
   * @param key The store key of the deleted object (a non-empty string).
   * @param obj The last known state of the object.
   * @throws {TypeError} when `key` is not a non-empty string.
   */
  constructor(key: string, obj: T) {
    if (typeof key !== "string" || key === "") {
      throw new TypeError("DeletedFinalStateUnknown: key must be a non-empty string");
    }
    this.key = key;
    this.obj = obj;
  }
}
