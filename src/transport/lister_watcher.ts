import type { ResourceIdentity } from "./resource_identity.ts";
import type { KubeList, KubeObject, KubeObjectLike, WatchEvent } from "../api/types.ts";
import type { ServerFeatures } from "./server_features.ts";

/**
 * Options of one list call (one page).
 */
export interface ListOptions {
  /** `"0"` (any version, from the server's cache), `""` (a consistent read), or a version not to go below. Default: `""`. */
  resourceVersion?: string;
  /** `"NotOlderThan"` or `"Exact"`; only with a non-empty `resourceVersion`. Default: unset. */
  resourceVersionMatch?: string;
  /** Page size; 0 or unset asks for everything. Default: unset. */
  limit?: number;
  /** The continue token of the previous page. Default: unset. */
  continue?: string;
  /** Aborts the call. */
  signal?: AbortSignal;
  /**
   * Called with each item as it is decoded: an object returned (not null,
   * not an array) takes the item's place (a copy the caller already holds
   * of the same version of it, see `WatcherOptions.reuseListed`), so the
   * decoded copy is garbage at once rather than held until the whole list
   * is decoded; any other answer keeps the item, and a throw fails the
   * list. Items are passed as decoded, whatever they are (judging them is
   * the caller's job). The object returned may be the caller's live copy (a
   * store's): a lister-watcher that wraps another must not change it. A
   * lister-watcher may ignore this option. Default: none.
   */
  reuse?: (item: KubeObjectLike) => KubeObjectLike | null | undefined;
}

/**
 * Options of one watch call.
 */
export interface WatchOptions {
  /** Start after this version (`""` or `"0"`: from the current state). Default: `""`. */
  resourceVersion?: string;
  /** Ask the server to end the watch cleanly after this many seconds. Default: the server's. */
  timeoutSeconds?: number;
  /** Ask for BOOKMARK events. Default: `false`. */
  allowWatchBookmarks?: boolean;
  /** Streaming list: start with ADDED events for every object, then an end bookmark. Default: `false`. */
  sendInitialEvents?: boolean;
  /** With `sendInitialEvents`: `"NotOlderThan"`. Default: unset. */
  resourceVersionMatch?: string;
  /** Aborts the watch and cancels its body. */
  signal?: AbortSignal;
  /**
   * Called once when the server has accepted the watch (response headers
   * received, status OK), before any event: the reflector's status shows
   * "watching" from then on. Optional for implementations; without it the
   * first event counts as the moment of connection. Default: none.
   */
  onConnected?: () => void;
}

/**
 * The two calls a reflector needs from a resource. `watch` yields decoded
 * events; a failure to start rejects the first `next()`. Implementations must
 * honour `signal` (abort rejects with `signal.reason` and releases the body).
 */
export interface ListerWatcher<T extends KubeObjectLike = KubeObject> {
  /**
   * What is known of the server behind it, shared per server in the process
   * (`resourceListerWatcher` sets it); the watcher remembers there that a
   * server refuses streaming lists or sends periodic bookmarks. Optional.
   */
  readonly features?: ServerFeatures;
  /**
   * Reads the server's version into {@linkcode ServerFeatures.version}
   * (once per client; `resourceListerWatcher` asks `GET /version`). The
   * watcher calls it when a decision it reports depends on the server: a
   * refused streaming list, a learnt idle deadline. Optional; never throws.
   */
  serverVersion?(options: { signal?: AbortSignal }): Promise<void>;
  /**
   * Which server, resource and selection it serves, with the cluster's
   * identity where readable: what a checkpoint must match to be loaded.
   * Optional (`resourceListerWatcher` has it); a reflector with a
   * checkpoint and a lister-watcher without it must be given the identity.
   * Rejects only with `signal.reason` on abort.
   */
  identity?(options: { signal?: AbortSignal }): Promise<ResourceIdentity>;
  /**
   * Lists one page (or, without `limit`, everything): the objects and the
   * list's `metadata.resourceVersion` (and `continue` when more pages
   * follow). Rejects with a {@linkcode KubeStatusError} for an error answer.
   */
  list(options: ListOptions): Promise<KubeList<T>>;
  /**
   * Watches from `options.resourceVersion`: the decoded events, in order,
   * until the server ends the watch (the iterable ends) or it fails (it
   * throws). A failure to start rejects the first `next()`.
   */
  watch(options: WatchOptions): AsyncIterable<WatchEvent<T>>;
  /**
   * The same watch as `watch`, its events in the arrays they arrived in
   * (one per network read; never empty). Optional: the watcher uses it when
   * present, to pay the per-step cost of an async iterator once per read
   * rather than once per event; `resourceListerWatcher` has it.
   */
  watchBatches?(options: WatchOptions): AsyncIterable<WatchEvent<T>[]>;
}
