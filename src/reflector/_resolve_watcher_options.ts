import type { KubeObject } from "../api/types.ts";
import { Backoff } from "./backoff.ts";
import { systemClock } from "./clock.ts";
import type { ErrorPhase, WatcherObserver, WatcherOptions } from "./watcher_options.ts";

const resolvedOptions = new WeakSet<object>();

/** Every watcher option resolved to a value. */
export type ResolvedWatcherOptions =
  & Required<
    Omit<WatcherOptions, "signal" | "expectedKind" | "idleTimeoutMs" | "backoff" | "observer">
  >
  & {
    signal?: AbortSignal;
    expectedKind?: string;
    idleTimeoutMs?: number;
    backoff: Backoff;
    observer: WatcherObserver;
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
  const pageSize = options.pageSize ?? 500;
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw new RangeError(`pageSize must be an integer >= 0, got ${pageSize}`);
  }
  const backoff = options.backoff instanceof Backoff
    ? options.backoff
    : new Backoff({ clock, random, ...options.backoff });
  const resolved: ResolvedWatcherOptions = {
    signal: options.signal,
    initialResourceVersion: options.initialResourceVersion ?? "",
    expectedKind: options.expectedKind,
    pageSize,
    minWatchTimeoutMs: duration("minWatchTimeoutMs", options.minWatchTimeoutMs, 300_000, 1000),
    idleTimeoutMs: options.idleTimeoutMs === undefined
      ? undefined
      : duration("idleTimeoutMs", options.idleTimeoutMs, 0, 1),
    idleGraceMs: duration("idleGraceMs", options.idleGraceMs, 30_000),
    shortWatchMs: duration("shortWatchMs", options.shortWatchMs, 1_000),
    listTimeoutMs: duration("listTimeoutMs", options.listTimeoutMs, 120_000, 1),
    backoff,
    useStreamingList: options.useStreamingList ?? false,
    onError: options.onError ??
      ((err: unknown, phase: ErrorPhase) =>
        console.warn(`[${name}] ${phase}: ${err instanceof Error ? err.message : String(err)}`)),
    observer: guardedObserver(options.observer),
    clock,
    random,
  };
  resolvedOptions.add(resolved);
  return resolved;
}

/** Checks `obj.kind` against `expected` (objects without a kind pass: list items carry none). */
export function kindMatches(obj: KubeObject, expected: string | undefined): boolean {
  return expected === undefined || obj.kind === undefined || obj.kind === expected;
}

/** Wraps each observer callback so that a throw is ignored, as documented. */
function guardedObserver(observer: WatcherObserver | undefined): WatcherObserver {
  if (!observer) return {};
  const guarded: Record<string, unknown> = {};
  for (
    const name of ["listDone", "listFailed", "relist", "watchStart", "watchEnd", "event"] as const
  ) {
    const fn = observer[name] as ((...args: unknown[]) => void) | undefined;
    if (typeof fn !== "function") continue;
    guarded[name] = (...args: unknown[]) => {
      try {
        fn.apply(observer, args);
      } catch { /* metrics must never break the watcher */ }
    };
  }
  return guarded as WatcherObserver;
}
