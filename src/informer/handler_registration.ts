/**
 * What `Informer.addEventHandler` returns.
 *
 * @module
 */

/**
 * One handler's registration with an informer (client-go's
 * `ResourceEventHandlerRegistration`).
 */
export interface HandlerRegistration {
  /**
   * True once the informer has synced and this handler has been called for
   * every object of the initial list (or, for a handler added later, for
   * every object that existed when it was added).
   */
  hasSynced(): boolean;
  /**
   * Resolves when {@linkcode HandlerRegistration.hasSynced} becomes true.
   * Rejects with `signal.reason` when `signal` aborts first, and with an
   * `Error` when the registration is removed or the informer stops first.
   */
  waitForSync(options?: { signal?: AbortSignal }): Promise<void>;
  /** Notifications waiting for this handler. */
  readonly pending: number;
  /** True after `remove()`, or once the informer has stopped. */
  readonly removed: boolean;
  /**
   * Stops deliveries to this handler at once: waiting notifications are
   * dropped; a call already in progress finishes on its own.
   */
  remove(): void;
}
