import { WatchIdleTimeoutError } from "../api/errors.ts";
import type { Clock } from "./clock.ts";

/**
 * Wraps an event stream with an idle deadline: while the wrapper waits for
 * the next event, a timer runs; when `idleMs` pass without one, `abort` is
 * called with a {@linkcode WatchIdleTimeoutError} (the caller aborts the
 * request, which cancels the body and ends the stream). The timer runs only
 * while waiting on the stream, so time the consumer spends on an event is
 * never idle time. Leaves no timer behind.
 */
export async function* withIdleDeadline<E>(
  events: AsyncIterable<E>,
  idleMs: number,
  clock: Clock,
  abort: (reason: WatchIdleTimeoutError) => void,
): AsyncGenerator<E, void, undefined> {
  const iterator = events[Symbol.asyncIterator]();
  let done = false;
  try {
    while (true) {
      const handle = clock.setTimeout(() => abort(new WatchIdleTimeoutError(idleMs)), idleMs);
      let step: IteratorResult<E>;
      try {
        step = await iterator.next();
      } finally {
        clock.clearTimeout(handle);
      }
      if (step.done) {
        done = true;
        return;
      }
      yield step.value;
    }
  } finally {
    if (!done) await iterator.return?.();
  }
}
