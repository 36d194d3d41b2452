/**
 * Waits for what user code returned, but never longer than `signal` allows:
 * the result rejects with `signal.reason` as soon as the signal aborts, even
 * when `work` never settles (a storage or hook that ignores its signal). A
 * later rejection of `work` is caught, never unhandled. Leaves no listener
 * behind either way.
 */
export function abortable<T>(work: T | PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  const promise = Promise.resolve(work);
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
