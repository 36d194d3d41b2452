/**
 * Waiting for several informers (or handler registrations) to sync.
 *
 * @module
 */

/**
 * Anything that syncs once: an `Informer`, a `HandlerRegistration`, a `Reflector`.
 */
export interface Syncable {
  /** True once it has synced. */
  hasSynced(): boolean;
  /**
   * Resolves once it has synced; rejects when `signal` aborts first or when
   * it can no longer sync (stopped, removed).
   */
  waitForSync(options: { signal?: AbortSignal }): Promise<void>;
}

/**
 * Resolves `true` once every one of `syncables` has synced, or `false` as
 * soon as `signal` aborts or one of them can no longer sync (a registration
 * removed, an informer stopped). Never rejects; leaves no listener behind.
 * client-go's `cache.WaitForCacheSync`.
 */
export async function waitForCacheSync(
  signal: AbortSignal,
  ...syncables: Syncable[]
): Promise<boolean> {
  if (!(signal instanceof AbortSignal)) {
    throw new TypeError("waitForCacheSync: signal must be an AbortSignal");
  }
  if (syncables.every((s) => s.hasSynced())) return true;
  if (signal.aborted) return false;
  const inner = new AbortController();
  const onAbort = () => inner.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.all(syncables.map((s) => s.waitForSync({ signal: inner.signal })));
    return true;
  } catch {
    return false;
  } finally {
    signal.removeEventListener("abort", onAbort);
    inner.abort(); // releases the waits that are still pending
  }
}
