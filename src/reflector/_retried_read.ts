import { delay } from "../async/_async.ts";
import { failureKind, retryAfterOf } from "./_failure_kind.ts";
import type { ResolvedWatcherOptions } from "./_resolve_watcher_options.ts";
import { type MachineState, next, type Outcome } from "./_watch_machine.ts";
import { waitMs } from "./watcher.ts";

/**
 * One read retried by the recovery rules of a list: `read` is asked again
 * after the wait the watch machine gives a failed list (the backoff, a
 * `Retry-After` honoured up to `maxRetryAfterMs`) until it answers or
 * `signal` aborts (then it rejects with `signal.reason`). Each failure is
 * reported (phase `list`). For the small reads that are not a phase of the
 * watcher (`catchUp`'s target version), so that they fail and wait as the
 * watcher's lists do.
 */
export async function retriedRead<R>(
  o: ResolvedWatcherOptions,
  signal: AbortSignal,
  read: () => Promise<R>,
): Promise<R> {
  let state: MachineState = { phase: { kind: "list", rv: "" }, streaming: false };
  const limits = { shortWatchMs: o.shortWatchMs, streamingListAttempts: 1 };
  while (true) {
    signal.throwIfAborted();
    let err: unknown;
    try {
      return await read();
    } catch (caught) {
      if (signal.aborted) throw signal.reason;
      err = caught;
    }
    try {
      o.onError(err, "list");
    } catch { /* a handler's own failure changes nothing */ }
    const failed: Outcome = {
      kind: "failed",
      failure: failureKind(err),
      rv: "",
      events: 0,
      durationMs: 0,
    };
    const t = next(state, failed, limits);
    state = t.state;
    await delay(waitMs(o, t.wait, retryAfterOf(err)), signal, o.clock);
  }
}
