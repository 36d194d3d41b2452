/**
 * The demo's counters, fed by the reflector's observer hooks (the same
 * hooks a metrics backend gets) and its `onError`: events by type, relists
 * by reason, reconnects, handled errors by reason, the time of the last
 * event, and an events-per-second meter.
 *
 * @module
 */
import type { Clock } from "../async/clock.ts";
import { type ErrorReason, errorReason } from "../metrics/error_reason.ts";
import type { RelistReason, WatcherObserver, WatcherState } from "../reflector/watcher_options.ts";

/** Counts what a reflector reports; `observer` and `onError` are handed to it. */
export class DemoCounters {
  readonly #clock: Clock;
  /** Change events (ADDED, MODIFIED, DELETED), also a streaming list's initial events. */
  events = 0;
  /** Events by type, bookmarks included. */
  readonly byType = { ADDED: 0, MODIFIED: 0, DELETED: 0, BOOKMARK: 0 };
  /** Lists by reason (`initial` included). */
  readonly relists = new Map<RelistReason, number>();
  /** Watch requests that followed a watch (not a list): after a dropped, stalled, refused or ended connection. */
  reconnects = 0;
  /** Errors recovery handled, by reason. */
  readonly errors = new Map<ErrorReason, number>();
  /** When the last change event arrived (clock time), if any did. */
  lastEventAt: number | undefined;
  #lastPhase: "list" | "watch" | undefined;
  #samples: { at: number; events: number }[] = [];

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#samples.push({ at: clock.now(), events: 0 });
  }

  /** Lists that were not the first. */
  get relistCount(): number {
    let n = 0;
    for (const [reason, count] of this.relists) if (reason !== "initial") n += count;
    return n;
  }

  /** Handled errors, all reasons. */
  get errorCount(): number {
    let n = 0;
    for (const count of this.errors.values()) n += count;
    return n;
  }

  /** The reflector's observer. */
  readonly observer: WatcherObserver = {
    relist: (reason) => void this.relists.set(reason, (this.relists.get(reason) ?? 0) + 1),
    state: ({ state }) => this.#state(state),
    event: (type) => {
      this.byType[type]++;
      if (type === "BOOKMARK") return;
      this.events++;
      this.lastEventAt = this.#clock.now();
    },
  };

  /** The reflector's `onError`. */
  readonly onError = (error: unknown): void => {
    const reason = errorReason(error);
    this.errors.set(reason, (this.errors.get(reason) ?? 0) + 1);
  };

  /**
   * Change events per second over about the last second: call it at each
   * refresh of the status (it keeps the samples it needs).
   */
  eventsPerSecond(): number {
    const now = this.#clock.now();
    this.#samples.push({ at: now, events: this.events });
    while (this.#samples.length > 2 && now - this.#samples[1].at >= 1_000) this.#samples.shift();
    const first = this.#samples[0];
    const span = now - first.at;
    return span > 0 ? ((this.events - first.events) * 1_000) / span : 0;
  }

  #state(state: WatcherState): void {
    if (state === "listing") this.#lastPhase = "list";
    else if (state === "connecting") {
      if (this.#lastPhase === "watch") this.reconnects++;
      this.#lastPhase = "watch";
    } else if (state === "watching") this.#lastPhase = "watch";
  }
}
