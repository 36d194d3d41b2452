/**
 * Waiting for several informers (or handler registrations) to sync.
 *
 * @module
 */
import type { ErrorPhase } from "../reflector/watcher_options.ts";
import { messageOf } from "./logger.ts";

/**
 * Anything that syncs once: an `Informer`, a `HandlerRegistration`, a `Reflector`.
 */
export interface Syncable {
  /** True once it has synced. */
  hasSynced(): boolean;
  /**
   * Resolves once it has synced; rejects when `signal` aborts first or when
   * it can no longer sync (stopped, removed).
   */
  waitForSync(options: { signal?: AbortSignal }): Promise<void>;
  /** Its name, for {@linkcode CacheSyncResult} (informers and reflectors have one). */
  readonly name?: string;
  /** Its status, whose last error {@linkcode CacheSyncResult} reports (informers and reflectors have one). */
  readonly status?: { lastError?: { error: unknown; phase: ErrorPhase; at: number } };
}

/**
 * One syncable that has not synced, in a {@linkcode CacheSyncResult}.
 */
export interface NotSynced {
  /** Its `name`, or `#i` (its position among the syncables) when it has none. */
  name: string;
  /** Its last handled error (from its `status`), with phase and time: why it is not synced. */
  lastError?: { error: unknown; phase: ErrorPhase; at: number };
  /** True when it can no longer sync (an informer stopped, a registration removed). */
  stopped: boolean;
}

/**
 * What {@linkcode waitForCacheSyncResult} found.
 */
export interface CacheSyncResult {
  /** True when every syncable has synced. */
  synced: boolean;
  /** Those that have not, in the order given; empty when `synced`. */
  notSynced: NotSynced[];
  /**
   * One line for a log or an error: `"synced"`, or for example
   * `"not synced: pods (list: forbidden), nodes (no error yet)"`.
   */
  message: string;
}

/**
 * Resolves `true` once every one of `syncables` has synced, or `false` as
 * soon as `signal` aborts or one of them can no longer sync (a registration
 * removed, an informer stopped). Never rejects; leaves no listener behind
 * and adds one to `signal`, however many syncables. client-go's
 * `cache.WaitForCacheSync`. To learn which did not sync and why, use
 * {@linkcode waitForCacheSyncResult}.
 */
export async function waitForCacheSync(
  signal: AbortSignal,
  ...syncables: Syncable[]
): Promise<boolean> {
  return (await waitForCacheSyncResult(signal, ...syncables)).synced;
}

/**
 * {@linkcode waitForCacheSync} that tells why: resolves with `synced` and,
 * for each syncable not synced, its name, its last handled error and whether
 * it stopped. Never rejects.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Informer, KubeClient, resourceListerWatcher, waitForCacheSyncResult } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * server.inject({ verb: "list", times: Infinity, fault: { kind: "status", code: 403 } });
 * const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
 *   apiVersion: "v1",
 *   resource: "configmaps",
 * });
 * const informer = new Informer(lw, {
 *   name: "configmaps",
 *   useStreamingList: false,
 *   backoff: { initialMs: 10 },
 *   onError: () => {},
 * });
 * const ac = new AbortController();
 * const done = informer.run({ signal: ac.signal });
 * const giveUp = new AbortController();
 * const waiting = waitForCacheSyncResult(giveUp.signal, informer);
 * await server.waitForRequests((r) => r.verb === "list", { count: 2 }); // failed, retried
 * giveUp.abort();
 * const result = await waiting;
 * assert.equal(result.synced, false);
 * assert.equal(result.notSynced[0].name, "configmaps");
 * assert.equal(result.notSynced[0].lastError?.phase, "list");
 * ac.abort();
 * await done;
 * await server.close();
 * ```
 */
export async function waitForCacheSyncResult(
  signal: AbortSignal,
  ...syncables: Syncable[]
): Promise<CacheSyncResult> {
  if (!(signal instanceof AbortSignal)) {
    throw new TypeError("waitForCacheSync: signal must be an AbortSignal");
  }
  const stopped = new Set<Syncable>();
  const pending = syncables.filter((s) => !s.hasSynced());
  if (pending.length > 0 && !signal.aborted) {
    // One listener on the caller's signal, one controller per wait: hundreds
    // of informers must not pile listeners onto one signal.
    const controllers = pending.map(() => new AbortController());
    const abortAll = (reason?: unknown) => {
      for (const c of controllers) c.abort(reason);
    };
    const onAbort = () => abortAll(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      await Promise.all(
        pending.map((s, i) =>
          s.waitForSync({ signal: controllers[i].signal }).catch(() => {
            if (controllers[i].signal.aborted) return;
            stopped.add(s); // it can no longer sync: so neither can all of them
            abortAll();
          })
        ),
      );
    } finally {
      signal.removeEventListener("abort", onAbort);
      abortAll(); // releases the waits that are still pending
    }
  }
  const notSynced: NotSynced[] = [];
  syncables.forEach((s, i) => {
    if (s.hasSynced()) return;
    const lastError = s.status?.lastError;
    notSynced.push({
      name: typeof s.name === "string" ? s.name : `#${i}`,
      ...(lastError ? { lastError } : {}),
      stopped: stopped.has(s),
    });
  });
  const message = notSynced.length === 0
    ? "synced"
    : `not synced: ${
      notSynced.map(({ name, lastError, stopped }) =>
        `${name} (${
          [
            stopped ? "stopped" : "",
            lastError ? `${lastError.phase}: ${messageOf(lastError.error)}` : "no error yet",
          ].filter(Boolean).join(", ")
        })`
      ).join(", ")
    }`;
  return { synced: notSynced.length === 0, notSynced, message };
}
