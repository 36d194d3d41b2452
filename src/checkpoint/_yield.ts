/**
 * Giving the event loop a turn during long work (saving or loading 100k
 * objects): `await`ing a resolved promise only runs microtasks, so timers,
 * sockets and other requests would wait for the whole job.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
const setImmediateFn: ((fn: () => void) => unknown) | undefined = (globalThis as any).setImmediate;

/** Resolves on a later turn of the event loop (after pending I/O and timers). */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (setImmediateFn) setImmediateFn(resolve);
    else setTimeout(resolve, 0);
  });
}

/**
 * Counts work and yields a turn of the event loop after every `every`
 * units (bytes, by default 1 MiB: a few milliseconds of encoding or
 * parsing), so no single stretch blocks the loop for long. Counted in work
 * rather than time: edge runtimes freeze their clocks between I/O.
 */
export class TurnTaker {
  #every: number;
  #done = 0;
  constructor(every = 1024 * 1024) {
    this.#every = every;
  }
  /** Adds `units` of work; resolves after a turn of the event loop when due. */
  add(units: number): Promise<void> | undefined {
    this.#done += units;
    if (this.#done < this.#every) return undefined;
    this.#done = 0;
    return nextTurn();
  }
}
