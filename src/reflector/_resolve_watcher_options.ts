import { isExpired } from "../api/predicates.ts";
import { Backoff, type BackoffOptions } from "../async/backoff.ts";
import { systemClock } from "../async/clock.ts";
import type { ErrorPhase, WatcherObserver, WatcherOptions } from "./watcher_options.ts";
import { WATCHER_DEFAULTS } from "./watcher_defaults.ts";

const resolvedOptions = new WeakSet<object>();

/** Every watcher option resolved to a value. */
export type ResolvedWatcherOptions =
  & Required<
    Omit<
      WatcherOptions,
      | "signal"
      | "expectedKind"
      | "idleTimeoutMs"
      | "backoff"
      | "reconnectBackoff"
      | "observer"
      | "reuseListed"
    >
  >
  & {
    signal?: AbortSignal;
    expectedKind?: string;
    idleTimeoutMs?: number;
    backoff: Backoff;
    reconnectBackoff: Backoff;
    observer: WatcherObserver;
    reuseListed?: WatcherOptions["reuseListed"];
    /** Internal (catchUp): every watch's `timeoutSeconds`, instead of one drawn from `minWatchTimeoutMs`. */
    watchTimeoutSeconds?: number;
    /** Internal (catchUp): the first list is a consistent read (`""`), not `initialResourceVersion || "0"`. */
    consistentFirstList?: boolean;
  };

function duration(name: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min) {
    throw new RangeError(`${name} must be a finite number of milliseconds >= ${min}, got ${v}`);
  }
  return v;
}

/**
 * Validates options and fills in defaults; throws `TypeError`/`RangeError`
 * for invalid ones, so mistakes surface at construction.
 */
export function resolveWatcherOptions(
  options: WatcherOptions | ResolvedWatcherOptions = {},
  name = "watcher",
): ResolvedWatcherOptions {
  if (resolvedOptions.has(options)) return options as ResolvedWatcherOptions;
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  if (typeof random !== "function") throw new TypeError("random must be a function");
  if (options.onError !== undefined && typeof options.onError !== "function") {
    throw new TypeError("onError must be a function");
  }
  if (
    options.expectedKind !== undefined &&
    (typeof options.expectedKind !== "string" || !options.expectedKind)
  ) {
    throw new TypeError("expectedKind must be a non-empty string");
  }
  if (options.reuseListed !== undefined && typeof options.reuseListed !== "function") {
    throw new TypeError("reuseListed must be a function");
  }
  const D = WATCHER_DEFAULTS;
  const pageSize = options.pageSize ?? D.pageSize;
  if (!Number.isSafeInteger(pageSize) || pageSize < 0) {
    throw new RangeError(`pageSize must be an integer >= 0, got ${pageSize}`);
  }
  const attempts = options.streamingListAttempts ?? D.streamingListAttempts;
  if (!Number.isSafeInteger(attempts) || attempts < 1) {
    throw new RangeError(`streamingListAttempts must be an integer >= 1, got ${attempts}`);
  }
  const backoffOf = (
    value: WatcherOptions["backoff"],
    defaults: Readonly<Required<Omit<BackoffOptions, "clock" | "random">>>,
    what: string,
  ) => {
    if (value instanceof Backoff) return value;
    if (value !== undefined && (value === null || typeof value !== "object")) {
      throw new TypeError(`${what} must be an options object or a Backoff`);
    }
    const given = Object.fromEntries(
      Object.entries(value ?? {}).filter(([, v]) => v !== undefined),
    ) as BackoffOptions;
    const merged: BackoffOptions = { ...defaults, clock, random, ...given };
    // a cap below the default first delay lowers the first delay too
    if (
      given.initialMs === undefined && given.capMs !== undefined && given.capMs < defaults.initialMs
    ) {
      merged.initialMs = given.capMs;
    }
    return new Backoff(merged);
  };
  const resolved: ResolvedWatcherOptions = {
    signal: options.signal,
    initialResourceVersion: options.initialResourceVersion ?? "",
    resumeResourceVersion: options.resumeResourceVersion ?? "",
    expectedKind: options.expectedKind,
    pageSize,
    minWatchTimeoutMs: duration(
      "minWatchTimeoutMs",
      options.minWatchTimeoutMs,
      D.minWatchTimeoutMs,
      1000,
    ),
    idleTimeoutMs: options.idleTimeoutMs === undefined
      ? undefined
      : duration("idleTimeoutMs", options.idleTimeoutMs, 0, 1),
    idleGraceMs: duration("idleGraceMs", options.idleGraceMs, D.idleGraceMs),
    shortWatchMs: duration("shortWatchMs", options.shortWatchMs, D.shortWatchMs),
    listTimeoutMs: duration("listTimeoutMs", options.listTimeoutMs, D.listTimeoutMs, 1),
    maxRetryAfterMs: duration("maxRetryAfterMs", options.maxRetryAfterMs, D.maxRetryAfterMs),
    backoff: backoffOf(options.backoff, D.backoff, "backoff"),
    reconnectBackoff: backoffOf(options.reconnectBackoff, D.reconnectBackoff, "reconnectBackoff"),
    useStreamingList: options.useStreamingList ?? D.useStreamingList,
    streamingListAttempts: attempts,
    reuseListed: options.reuseListed,
    onError: options.onError ??
      ((err: unknown, phase: ErrorPhase) => {
        // A 410 is routine (the version is gone; a relist recovers it at
        // once): the default says nothing of it; a handler of one's own sees it.
        if (isExpired(err)) return;
        console.warn(`[${name}] ${phase}: ${err instanceof Error ? err.message : String(err)}`);
      }),
    observer: guardedObserver(options.observer),
    clock,
    random,
  };
  resolvedOptions.add(resolved);
  return resolved;
}

/** Every callback of a {@linkcode WatcherObserver}. */
export const OBSERVER_METHODS = [
  "listDone",
  "listFailed",
  "relist",
  "watchStart",
  "watchEnd",
  "event",
  "state",
] as const;

/** Wraps each observer callback so that a throw is ignored, as documented. */
function guardedObserver(observer: WatcherObserver | undefined): WatcherObserver {
  if (!observer) return {};
  const guarded: Record<string, unknown> = {};
  for (
    const name of OBSERVER_METHODS
  ) {
    const fn = observer[name] as ((...args: unknown[]) => void) | undefined;
    if (typeof fn !== "function") continue;
    guarded[name] = (...args: unknown[]) => {
      try {
        fn.apply(observer, args);
      } catch { /* metrics must never break the watcher */ }
    };
  }
  // once per event: no argument arrays
  const event = observer.event;
  if (typeof event === "function") {
    guarded.event = (type: Parameters<typeof event>[0], rv: string) => {
      try {
        event.call(observer, type, rv);
      } catch { /* metrics must never break the watcher */ }
    };
  }
  return guarded as WatcherObserver;
}
