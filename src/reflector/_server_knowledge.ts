import type { ServerFeatures } from "../transport/server_features.ts";
import { MAX_BOOKMARK_GAP_MS } from "./_watch_session.ts";

/**
 * What the watchers of one process know about an API server, with verbs:
 * the only writer of the process-wide {@linkcode ServerFeatures} record a
 * `ListerWatcher` shares (without one, knowledge lives and dies with the
 * watcher). Only a refusal of the streaming-list feature itself is
 * remembered (a 403 or 404 is about a resource, not the server).
 */
export class ServerKnowledge {
  readonly #features: ServerFeatures;
  /** Whether the record is shared with the other watchers of the server (a lister-watcher's). */
  readonly shared: boolean;

  /** Wraps the shared record, or a private one when the lister-watcher has none. */
  constructor(features: ServerFeatures | undefined) {
    this.#features = features ?? {};
    this.shared = features !== undefined;
  }

  /** Streaming lists are known to be refused by this server. */
  get refusesStreaming(): boolean {
    return this.#features.streamingList === false;
  }

  /** The server's version, when it was read. */
  get version(): string | undefined {
    return this.#features.version;
  }

  /** The periodic bookmarks' interval last observed, in ms. */
  get bookmarkIntervalMs(): number | undefined {
    return this.#features.bookmarkIntervalMs;
  }

  /**
   * The server refused a streaming list: remembered for the process.
   * Returns true the first time only, for the one report per server.
   */
  refusedStreaming(): boolean {
    this.#features.streamingList = false;
    if (this.#features.streamingListRefusalReported) return false;
    this.#features.streamingListRefusalReported = true;
    return true;
  }

  /** A streaming list worked. */
  streamed(): void {
    this.#features.streamingList = true;
  }

  /**
   * Two periodic bookmarks `gapMs` apart were seen on one watch: later
   * watches may use a shorter idle deadline. Returns true when this is the
   * first interval learnt (the caller may then read the server's version,
   * which the learnt deadline's message names).
   */
  sawBookmarkGap(gapMs: number): boolean {
    // Only a shared record is learnt into: a watcher of its own keeps the safe deadline.
    if (!this.shared || !(gapMs >= 0 && gapMs <= MAX_BOOKMARK_GAP_MS)) return false;
    const first = this.#features.bookmarkIntervalMs === undefined;
    this.#features.bookmarkIntervalMs = Math.min(this.#features.bookmarkIntervalMs ?? gapMs, gapMs);
    return first && this.#features.version === undefined;
  }

  /**
   * A deadline learnt from periodic bookmarks fired: a dead peer, or a
   * server that stopped sending them. The safe deadline is used until they
   * are seen again.
   */
  learntDeadlineFired(): void {
    this.#features.bookmarkIntervalMs = undefined;
  }
}
