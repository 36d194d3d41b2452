/**
 * Waits on user code (a storage, a hook) no longer than a signal allows,
 * whether or not that code honours the signal itself.
 *
 * @module
 */

/** Options of {@linkcode abortable}. */
export interface AbortableOptions<T> {
  /**
   * Called with `work`'s value when it fulfils after the signal won the race
   * (a file handle, a stream nobody will read any more), so that a late
   * result is released rather than leaked. Its errors are ignored.
   * Default: none.
   */
  dispose?: (value: T) => unknown;
}

/**
 * Waits for what user code returned, but never longer than `signal` allows:
 * the result rejects with `signal.reason` as soon as the signal aborts, even
 * when `work` never settles (a storage or hook that ignores its signal). A
 * later rejection of `work` is caught, never unhandled; a later value is
 * handed to `options.dispose`. Leaves no listener behind either way.
 */
export function abortable<T>(
  work: T | PromiseLike<T>,
  signal?: AbortSignal,
  options: AbortableOptions<T> = {},
): Promise<T> {
  const promise = Promise.resolve(work);
  if (!signal) return promise;
  const abandon = () => {
    const { dispose } = options;
    promise.then((value) => {
      try {
        Promise.resolve(dispose?.(value)).catch(() => {});
      } catch { /* ignored: nobody is left to tell */ }
    }, () => {});
  };
  if (signal.aborted) {
    abandon();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      abandon();
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

/**
 * Iterates `iterable`, handing each value to `each` (awaited), with every
 * `next()` raced against `signal` (see {@linkcode abortable}): an iterator
 * that never answers cannot outlast the signal. The iterator is taken at
 * once, and released (its `return()`) whenever the loop ends before it is
 * done, also when the signal had aborted before the first step: after an
 * error that release is awaited (raced against the signal); after an abort
 * it is started but not awaited, as the iterator may never answer. Rejects
 * with `signal.reason` on abort, else with the error of `next()` or `each`.
 */
export async function abortableForEach<T>(
  iterable: AsyncIterable<T>,
  signal: AbortSignal | undefined,
  each: (value: T) => void | PromiseLike<void>,
): Promise<void> {
  const iterator = iterable[Symbol.asyncIterator]();
  let done = false;
  try {
    while (true) {
      signal?.throwIfAborted();
      const step = await abortable(iterator.next(), signal);
      if (step.done) {
        done = true;
        return;
      }
      await each(step.value);
    }
  } finally {
    if (!done) await release(iterator, signal);
  }
}

/** Calls `iterator.return()`: awaited (raced against `signal`) unless the signal has aborted. */
async function release(iterator: AsyncIterator<unknown>, signal: AbortSignal | undefined) {
  let closing: Promise<unknown>;
  try {
    closing = Promise.resolve(iterator.return?.());
  } catch {
    return; // a broken iterator: nothing more to release
  }
  if (signal?.aborted) {
    closing.catch(() => {});
    return;
  }
  await abortable(closing, signal).catch(() => {});
}
