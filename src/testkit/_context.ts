/**
 * The state every request handler of the fake API server shares.
 *
 * @module
 */
import type { ContinueSnapshots } from "./_continue_snapshots.ts";
import type { ObjectStore } from "./_object_store.ts";
import type { ResourceRegistry } from "./_resources.ts";
import type { WatchSession } from "./_watch_session.ts";

/** The behaviour options, resolved (see `FakeApiServerOptions` for each one's meaning). */
export interface Behaviour {
  tooLargeDelayMs: number;
  paginateResourceVersionZero: boolean;
  expiredWatch: "event" | "status";
  bookmarkIntervalMs: number;
  /** `Infinity` when there is no cap. */
  maxWatchMs: number;
  defaultWatchTimeoutSeconds: number;
  streamingList: boolean;
  discovery: "aggregated" | "legacy";
}

/** What handlers read and change. */
export interface ServerContext {
  readonly behaviour: Behaviour;
  readonly registry: ResourceRegistry;
  readonly store: ObjectStore;
  readonly snapshots: ContinueSnapshots;
  /** Called when a watch has sent its headers and subscribed to changes. */
  watchStarted(session: WatchSession): void;
  /** Called once when a watch is over. */
  watchEnded(session: WatchSession): void;
}

/**
 * Resolves true once the store reaches `rv`, false after `ms` or when
 * `signal` aborts; leaves no timer or listener behind.
 */
export function waitForResourceVersion(
  store: ObjectStore,
  rv: number,
  ms: number,
  signal: AbortSignal,
): Promise<boolean> {
  if (store.resourceVersion >= rv) return Promise.resolve(true);
  if (ms <= 0 || signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (reached: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener("abort", onAbort);
      resolve(reached);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    const unsubscribe = store.subscribe(() => {
      if (store.resourceVersion >= rv) done(true);
    });
    signal.addEventListener("abort", onAbort);
  });
}
