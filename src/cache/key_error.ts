/**
 * A key function could not compute a store key for an object: it is not
 * an object, has no `metadata`, or has no usable `metadata.name`. The
 * message names the object's kind and namespace when known, never its
 * content (it could be a Secret).
 */
export class KeyError extends Error {
  /**
   * Creates the error.
   *
   * @param message What is missing, naming the object's kind and namespace when known, never its content.
   * @param options The underlying error as `cause`, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "KeyError";
  }
}
