/**
 * One open watch: a queue of event lines written to the response in
 * order, live events offered by the store, bookmarks, the timeout that
 * ends it cleanly, and the fault (if any) that cuts it short.
 *
 * @module
 */
import type { Status } from "../api/types.ts";
import type { BodyWriter } from "./_body_writer.ts";
import type { StoredEvent } from "./_object_store.ts";
import type { Reply } from "./_reply.ts";
import type { Resource } from "./_resources.ts";
import { bookmarkLine, changeLine, eventLine } from "./_watch_events.ts";
import type { View } from "./_view.ts";
import type { CloseFault, ErrorEventFault, RawFault, ResetFault, StallFault } from "./fault.ts";

/** The faults that act inside a watch stream. */
export type StreamFault = CloseFault | StallFault | ErrorEventFault | RawFault | ResetFault;

/** Options of {@linkcode WatchSession}. */
export interface WatchSessionOptions {
  reply: Reply;
  /** Makes the body writer; it must stop writing when the signal aborts. */
  writer: (signal: AbortSignal) => BodyWriter;
  resource: Resource;
  view: View;
  /** Live events at or below this resourceVersion were already sent (or not asked for). */
  sinceRv: number;
  currentRv: () => number;
  allowBookmarks: boolean;
  /** 0: no periodic bookmarks. */
  bookmarkIntervalMs: number;
  /** The watch ends cleanly (after a bookmark when allowed) after this long. */
  durationMs: number;
  fault?: StreamFault;
  /** The Status an ERROR event of this code carries. */
  statusFor: (code: number, message?: string) => Status;
  /** Called once when the session is over, however it ended. */
  onClose: (session: WatchSession) => void;
}

const END = Symbol("end");

/** A watch stream being served. */
export class WatchSession {
  readonly #o: WatchSessionOptions;
  readonly #queue: (string | typeof END)[] = [];
  readonly #stop = new AbortController();
  readonly #writer: BodyWriter;
  #timers: ReturnType<typeof setTimeout>[] = [];
  #written = 0;
  #pumping = false;
  #ending = false;
  #stalled = false;
  #closed = false;
  #faultDone: boolean;

  constructor(options: WatchSessionOptions) {
    this.#o = options;
    this.#faultDone = options.fault === undefined;
    this.#writer = options.writer(this.#stop.signal);
    options.reply.res.on("close", () => this.#cleanup());
  }

  /** Sends the headers and the initial lines, then starts the timers. */
  start(initialLines: string[]): void {
    const { reply, durationMs, allowBookmarks, bookmarkIntervalMs } = this.#o;
    reply.head(200);
    this.#queue.push(...initialLines);
    if (Number.isFinite(durationMs)) {
      this.#timers.push(setTimeout(() => this.end(allowBookmarks), Math.max(0, durationMs)));
    }
    if (allowBookmarks && bookmarkIntervalMs > 0) {
      this.#timers.push(setInterval(() => this.bookmark(), bookmarkIntervalMs));
    }
    this.#pump();
  }

  /** Offers a stored change; queued when this watch sees it. */
  offer(event: StoredEvent): void {
    if (this.#ending || this.#stalled || event.rv <= this.#o.sinceRv) return;
    if (event.resource.id !== this.#o.resource.id) return;
    const line = changeLine(event, this.#o.view);
    if (line) this.#enqueue(line);
  }

  /** Queues a BOOKMARK at the current resourceVersion (when bookmarks are allowed). */
  bookmark(): void {
    if (!this.#o.allowBookmarks || this.#ending || this.#stalled) return;
    this.#enqueue(bookmarkLine(this.#o.view, Math.max(this.#o.currentRv(), this.#o.sinceRv)));
  }

  /** Ends the stream cleanly after what is queued, optionally with a last bookmark. */
  end(withBookmark = false): void {
    if (this.#ending) return;
    if (withBookmark) this.bookmark();
    this.#ending = true;
    this.#clearTimers();
    this.#enqueue(END);
  }

  /** Drops the connection at once (server going down or closing). */
  destroy(): void {
    this.#cleanup();
    this.#o.reply.res.destroy();
  }

  #enqueue(item: string | typeof END): void {
    this.#queue.push(item);
    this.#pump();
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (!this.#closed && !this.#stalled) {
        if (!this.#faultDone && this.#written === (this.#o.fault!.afterEvents ?? 0)) {
          this.#faultDone = true;
          await this.#applyFault(this.#o.fault!);
          continue;
        }
        const item = this.#queue.shift();
        if (item === undefined) break;
        if (item === END) {
          this.#finish();
          break;
        }
        await this.#writer.write(item);
        this.#written++;
      }
    } finally {
      this.#pumping = false;
    }
  }

  async #applyFault(fault: StreamFault): Promise<void> {
    switch (fault.kind) {
      case "close":
        return this.#finish();
      case "stall":
        this.#stalled = true;
        this.#queue.length = 0;
        return this.#clearTimers();
      case "error-event":
        await this.#writer.write(eventLine("ERROR", this.#o.statusFor(fault.code, fault.message)));
        return this.#finish();
      case "raw":
        await this.#writer.write(fault.data);
        if (fault.then === "close") this.#finish();
        return;
      case "reset":
        this.#cleanup();
        return this.#o.reply.reset();
    }
  }

  #finish(): void {
    this.#cleanup();
    this.#o.reply.end();
  }

  #clearTimers(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = [];
  }

  #cleanup(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#ending = true;
    this.#queue.length = 0;
    this.#clearTimers();
    this.#stop.abort();
    this.#o.onClose(this);
  }
}
