import { WatchIdleTimeoutError } from "../api/errors.ts";
import type { Clock } from "../async/clock.ts";
import type { ServerKnowledge } from "./_server_knowledge.ts";

/**
 * Wraps an event stream with an idle deadline: while the wrapper waits for
 * the next event, the clock runs; when `idleMs` pass without one,
 * `controller` is aborted with a {@linkcode WatchIdleTimeoutError} (which
 * cancels the request and its body). Time the consumer spends on an event is
 * never idle time. `idleMs` is read again each time the timer fires (see
 * `check`). One timer, re-armed only when it fires, so events cost no
 * timer calls. When `controller` aborts, the wrapper stops waiting at
 * once, even for a stream that ignores its signal. Leaves no timer behind.
 */
export async function* withIdleDeadline<E>(
  events: AsyncIterable<E>,
  idleMs: () => number,
  clock: Clock,
  controller: AbortController,
  /** Look at `idleMs` again at least every `CHECK_MS` (see `check`). */
  adaptive = false,
  /** How the deadline was chosen, for the error's message. */
  why: () => string | undefined = () => undefined,
): AsyncGenerator<E, void, undefined> {
  const signal = controller.signal;
  const cap = adaptive ? CHECK_MS : Infinity;
  const iterator = events[Symbol.asyncIterator]();
  /** Set while waiting on the stream; undefined while the consumer holds an event. */
  let waitingSince: number | undefined;
  let timer: unknown;
  // The deadline may shrink while the watch runs (periodic bookmarks learnt
  // on it): the timer looks again at least every CHECK_MS.
  const check = () => {
    const idle = waitingSince === undefined ? 0 : clock.now() - waitingSince;
    const limit = idleMs();
    if (idle >= limit) controller.abort(new WatchIdleTimeoutError(limit, why()));
    else timer = clock.setTimeout(check, Math.min(limit - idle, cap));
  };
  // The wait for the next step rejects at once on abort. Not Promise.race
  // with one long-lived "aborted" promise: every race would leave a
  // reaction on it holding that step's result, so a watch would keep every
  // event it ever delivered until it ended.
  let rejectWait: ((reason: unknown) => void) | undefined;
  let settled = true; // the last next() has settled
  let last: Promise<unknown> = Promise.resolve();
  let done = false;
  let closing: Promise<unknown> | undefined;
  const onAbort = () => {
    if (rejectWait) return rejectWait(signal.reason);
    // Aborted while the consumer holds an event: this generator is
    // suspended at its `yield`, and its `finally` runs only if the consumer
    // asks for more. Close the stream now, so that a consumer that never
    // comes back leaves no request open.
    clock.clearTimeout(timer);
    if (settled && !done) closing = Promise.resolve(iterator.return?.()).catch(() => {});
  };
  signal.addEventListener("abort", onAbort, { once: true });
  timer = clock.setTimeout(check, Math.min(idleMs(), cap));
  try {
    while (true) {
      waitingSince = clock.now();
      settled = false;
      signal.throwIfAborted();
      const pending = iterator.next();
      last = pending.then(() => (settled = true), () => (settled = true));
      const step = await new Promise<IteratorResult<E>>((resolve, reject) => {
        rejectWait = reject;
        if (signal.aborted) reject(signal.reason);
        pending.then(resolve, reject);
      });
      rejectWait = undefined;
      waitingSince = undefined;
      if (step.done) {
        done = true;
        return;
      }
      yield step.value;
    }
  } finally {
    clock.clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    if (!done) {
      // A stream that honours its signal settles at once; give one that does
      // not a moment, then leave it behind rather than hang.
      if (!settled) {
        let handle: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<void>((resolve) => (handle = setTimeout(resolve, 100)));
        await Promise.race([last, late]);
        clearTimeout(handle);
      }
      if (closing) await closing;
      else if (settled) await Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }
}

/** The idle deadline is looked at again at least this often. */
const CHECK_MS = 15_000;

/** The shortest learnt idle deadline. */
const MIN_LEARNT_IDLE_MS = 90_000;
/** Added to two intervals for a watch that has not yet seen a periodic bookmark. */
const FRESH_SLACK_MS = 30_000;

/**
 * The idle deadline of one watch: the `idleTimeoutMs` option when given;
 * else one learnt from the server's periodic bookmarks (see
 * {@linkcode adaptiveIdleMs}), read again as the watch runs (bookmarks
 * learnt on this very watch shorten its own deadline too); else the safe
 * default, the watch's timeout plus a grace.
 */
export class IdleDeadline {
  readonly #knowledge: ServerKnowledge;
  readonly #fixedMs: number | undefined;
  readonly #safeMs: number;
  /** Whether the deadline may shrink while the watch runs (see `withIdleDeadline`). */
  readonly adaptive: boolean;

  /**
   * @param knowledge What is known of the server.
   * @param fixedMs The `idleTimeoutMs` option, when given.
   * @param safeMs The watch's timeout plus the grace, in ms.
   */
  constructor(knowledge: ServerKnowledge, fixedMs: number | undefined, safeMs: number) {
    this.#knowledge = knowledge;
    this.#fixedMs = fixedMs;
    this.#safeMs = safeMs;
    // Only knowledge shared with other watchers can change while this one waits.
    this.adaptive = fixedMs === undefined && knowledge.shared;
  }

  /** The learnt deadline, or undefined when none applies. */
  learntMs(established: boolean): number | undefined {
    if (this.#fixedMs !== undefined) return undefined;
    return adaptiveIdleMs(this.#knowledge.bookmarkIntervalMs, this.#safeMs, established);
  }

  /** The deadline now. */
  ms(established: boolean): number {
    return this.#fixedMs ?? this.learntMs(established) ?? this.#safeMs;
  }

  /** How a learnt deadline was chosen (and the server's version, when known), for the error. */
  why(established: boolean): string | undefined {
    const interval = this.#knowledge.bookmarkIntervalMs;
    if (this.learntMs(established) === undefined || interval === undefined) return undefined;
    const v = this.#knowledge.version;
    const server = v ? `kube-apiserver ${v}` : "the server";
    return `learnt from ${server}'s periodic bookmarks, one every ${Math.round(interval / 1000)} s`;
  }

  /** The deadline fired with `err`: a learnt one is forgotten until bookmarks are seen again. */
  fired(err: unknown, established: boolean): void {
    if (err instanceof WatchIdleTimeoutError && this.learntMs(established) !== undefined) {
      this.#knowledge.learntDeadlineFired();
    }
  }
}

/**
 * The idle deadline for a server seen sending periodic bookmarks every
 * `intervalMs` (`undefined` when none has been seen), never more than the
 * safe default:
 *
 * - on a watch that has already had a periodic bookmark or an event
 *   (`established`): 1.5 times the interval, at least 90 s: about 90 s for
 *   Kubernetes 1.27+'s one-minute bookmarks;
 * - on a fresh watch: two intervals + 30 s (150 s). kube-apiserver skips a
 *   periodic bookmark whose version is not past the watch's start, so on a
 *   quiet resource a fresh watch's first bookmark can come a period late.
 */
export function adaptiveIdleMs(
  intervalMs: number | undefined,
  safeIdleMs: number,
  established: boolean,
): number | undefined {
  if (intervalMs === undefined) return undefined;
  const learnt = established
    ? Math.max(MIN_LEARNT_IDLE_MS, Math.round(intervalMs * 1.5))
    : Math.max(MIN_LEARNT_IDLE_MS, 2 * intervalMs + FRESH_SLACK_MS);
  return Math.min(safeIdleMs, learnt);
}
