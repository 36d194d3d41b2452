/**
 * Spacing writes to one key of a key-value binding (Workers KV allows one
 * write per second per key): shared by every storage over the same binding
 * object in this isolate, per key. Writes to a key go one at a time, and
 * each waits until `intervalMs` has passed since the one before it was
 * done (it reached the store by then).
 *
 * @module
 */
import type { Clock } from "../async/clock.ts";
import { delay } from "../async/_async.ts";
import { abortable } from "../async/_abortable.ts";

interface KeyState {
  /** Settles when the last writer queued for the key is done. */
  tail: Promise<void>;
  /** Writers queued or running. */
  waiters: number;
  /** When the last write was done (on the writers' clock), or `-Infinity`. */
  last: number;
}

interface BindingState {
  keys: Map<string, KeyState>;
  /** The longest interval any storage over the binding asked for (to forget old keys). */
  maxIntervalMs: number;
}

const bindings = new WeakMap<object, BindingState>();

/** Options of {@linkcode withWriteSlot}. */
export interface WriteSlotOptions {
  intervalMs: number;
  clock: Clock;
  signal?: AbortSignal;
}

/**
 * Runs `write` once every earlier writer of `key` through `binding` is
 * done. `write` calls `slot()` right before it issues its write: `slot`
 * waits until `intervalMs` has passed since the previous write to the key
 * was issued, then records this one. Waits are raced against `signal`;
 * an aborted writer lets the next one in. `intervalMs` 0: `write` runs at
 * once, nothing is tracked.
 */
export async function withWriteSlot<R>(
  binding: object,
  key: string,
  options: WriteSlotOptions,
  write: (slot: () => Promise<void>) => Promise<R>,
): Promise<R> {
  const { intervalMs, clock, signal } = options;
  if (intervalMs <= 0) return await write(() => Promise.resolve());
  let b = bindings.get(binding);
  if (!b) bindings.set(binding, b = { keys: new Map(), maxIntervalMs: 0 });
  b.maxIntervalMs = Math.max(b.maxIntervalMs, intervalMs);
  forgetOld(b, clock.now());
  let state = b.keys.get(key);
  if (!state) b.keys.set(key, state = { tail: Promise.resolve(), waiters: 0, last: -Infinity });
  const s = state;
  const previous = s.tail;
  let done!: () => void;
  s.tail = new Promise<void>((resolve) => (done = resolve));
  s.waiters++;
  const release = () => {
    s.waiters--;
    done();
  };
  try {
    await abortable(previous, signal);
  } catch (err) {
    previous.then(release); // the next writer waits for the one before this one, not for this one
    throw err;
  }
  let issued = false;
  try {
    return await write(async () => {
      const wait = s.last + intervalMs - clock.now();
      if (wait > 0) await delay(wait, signal, clock);
      signal?.throwIfAborted();
      s.last = clock.now();
      issued = true;
    });
  } finally {
    // Counted again from when the write is done: the store received it by
    // then, whereas the clock read before it was sent may lag (workerd's
    // clock stands still within a turn), so the next write could reach
    // the store a few ms under the interval after it.
    if (issued) s.last = clock.now();
    release();
  }
}

/** Drops keys nobody waits for and last written longer ago than any interval. */
function forgetOld(b: BindingState, now: number): void {
  for (const [key, s] of b.keys) {
    if (s.waiters === 0 && now - s.last >= b.maxIntervalMs) b.keys.delete(key);
  }
}
