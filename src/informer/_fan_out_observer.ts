/**
 * Internals of informers: one observer feeding two.
 *
 * @module
 */
import type { WatcherObserver } from "../reflector/watcher_options.ts";
import { OBSERVER_METHODS } from "../reflector/_resolve_watcher_options.ts";

/** An observer calling the user's observer and the current metrics, ignoring their throws. */
export function fanOut(
  user: WatcherObserver,
  metrics: () => WatcherObserver | undefined,
): WatcherObserver {
  const keys = OBSERVER_METHODS;
  const out: Record<string, (...args: unknown[]) => void> = {};
  for (const key of keys) {
    out[key] = (...args: unknown[]) => {
      for (const target of [user, metrics()]) {
        try {
          (target?.[key] as ((...a: unknown[]) => void) | undefined)?.apply(target, args);
        } catch { /* observers must not break the watcher */ }
      }
    };
  }
  // once per event: no argument arrays
  out.event = (type, rv) => {
    try {
      user.event?.(type as never, rv as string);
    } catch { /* observers must not break the watcher */ }
    const m = metrics();
    try {
      m?.event?.(type as never, rv as string);
    } catch { /* observers must not break the watcher */ }
  };
  return out as WatcherObserver;
}
