import { ListTimeoutError, UnexpectedKindError } from "../api/errors.ts";
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { kindMatches } from "../api/predicates.ts";
import type { KubeObjectLike } from "../api/types.ts";
import { abortable } from "../async/_abortable.ts";
import { childAbortController } from "../async/_async.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { failureKind, retryAfterOf } from "./_failure_kind.ts";
import type { ResolvedWatcherOptions } from "./_resolve_watcher_options.ts";
import { metadataProblem, unexpectedKind } from "./_watch_session.ts";
import type { Outcome } from "./_watch_machine.ts";
import { listAllPages, type ListResult } from "./list_pager.ts";
import type { ErrorPhase } from "./watcher_options.ts";

/** What came of a list phase: the outcome, and the items to hand on when it listed. */
export interface Listed<T extends KubeObjectLike> {
  outcome: Outcome;
  /** The usable items, when the list completed. */
  items?: T[];
  /** A `Retry-After` the server sent with the failure, in ms (validated, not capped). */
  retryAfterMs?: number;
}

/**
 * Performs a list phase: every page, each under the list deadline; checks
 * the answer; reports and classifies a failure. Throws only `signal.reason`
 * on abort.
 */
export async function performList<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  o: ResolvedWatcherOptions,
  rv: string,
): Promise<Listed<T>> {
  const { clock, observer, signal } = o;
  const started = clock.now();
  observer.state?.({ state: "listing" });
  let result: ListResult<T>;
  try {
    result = checkList(await listWithDeadline(lw, rv, o));
    checkListKind(result, o.expectedKind);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    observer.listFailed?.({ durationMs: clock.now() - started, error: err });
    report(o, err, "list");
    const durationMs = clock.now() - started;
    return {
      outcome: { kind: "failed", failure: failureKind(err), rv, events: 0, durationMs },
      retryAfterMs: retryAfterOf(err),
    };
  }
  observer.listDone?.({
    durationMs: clock.now() - started,
    items: result.items.length,
    resourceVersion: result.resourceVersion,
  });
  return {
    outcome: { kind: "listed", rv: result.resourceVersion },
    items: usableItems(result.items, o, "list"),
  };
}

/** Hands an error to `onError`; a throwing handler is ignored. */
export function report(o: ResolvedWatcherOptions, err: unknown, phase: ErrorPhase): void {
  try {
    o.onError(err, phase);
  } catch { /* an error handler's own failure must not stop the watcher */ }
}

/**
 * Lists every page, each request under its own `listTimeoutMs` deadline (a
 * large paginated list may take longer in total; one stuck request may not).
 *
 * A list at a specific version (a relist from the last synced version) is
 * unpaginated, as client-go's reflector does: with `limit` set, the API
 * server reads exactly that version from etcd (which may still hold it right
 * after a restart whose watch cache no longer does, so the next watch would
 * 410 again, forever); without `limit` the watch cache serves it as "not
 * older than", and etcd is spared a thundering herd.
 */
async function listWithDeadline<T extends KubeObjectLike>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  o: ResolvedWatcherOptions,
): Promise<ListResult<T>> {
  const timed: ListerWatcher<T> = {
    watch: (opts) => lw.watch(opts),
    list: async (opts) => {
      const { controller, dispose } = childAbortController(o.signal);
      // The error is made when the deadline fires, not per page (a stack trace each).
      let timeout: ListTimeoutError | undefined;
      const handle = o.clock.setTimeout(
        () => controller.abort(timeout = new ListTimeoutError(o.listTimeoutMs)),
        o.listTimeoutMs,
      );
      try {
        // raced against the signal: a lister-watcher that ignores it cannot hold the watcher
        return await abortable(lw.list({ ...opts, signal: controller.signal }), controller.signal);
      } catch (err) {
        if (timeout !== undefined && controller.signal.reason === timeout) throw timeout;
        throw err;
      } finally {
        o.clock.clearTimeout(handle);
        dispose();
      }
    },
  };
  const exactVersion = resourceVersion !== "" && resourceVersion !== "0";
  return await listAllPages(timed, {
    resourceVersion,
    pageSize: exactVersion ? 0 : o.pageSize,
    signal: o.signal,
    reuse: listReuse(o),
  });
}

/**
 * What a list may put in place of each listed item: the answer of
 * `o.reuseListed`, asked only for an item the watcher would hand on (an
 * object with usable metadata, of the expected kind; a wrong one is left in
 * place, to be reported and left out by {@linkcode usableItems}) and taken
 * only if it is itself such an item. Anything else keeps the listed item.
 */
function listReuse(
  o: ResolvedWatcherOptions,
): ((item: KubeObjectLike) => KubeObjectLike | undefined) | undefined {
  const reuse = o.reuseListed;
  if (reuse === undefined) return undefined;
  return (item) => isUsableItem(item, o) ? heldItem(reuse(item), o) : undefined;
}

/** `answer`, if it is an item the watcher may hand on; otherwise undefined. */
export function heldItem<T extends KubeObjectLike>(
  answer: unknown,
  o: ResolvedWatcherOptions,
): T | undefined {
  return isUsableItem(answer, o) ? answer as T : undefined;
}

/** An object with usable metadata, of the expected kind. */
function isUsableItem(item: unknown, o: ResolvedWatcherOptions): boolean {
  return item !== null && typeof item === "object" && !Array.isArray(item) &&
    metadataProblem(item as { metadata?: unknown }) === undefined &&
    kindMatches(item as KubeObjectLike, o.expectedKind);
}

/** A list result must have an items array and a non-empty string resourceVersion. */
function checkList<T extends KubeObjectLike>(result: ListResult<T>): ListResult<T> {
  if (result === null || typeof result !== "object" || !Array.isArray(result.items)) {
    throw new MalformedResponseError("list", "items is not an array");
  }
  if (typeof result.resourceVersion !== "string") {
    throw new MalformedResponseError("list", "metadata.resourceVersion is not a string");
  }
  if (result.resourceVersion === "") {
    // A list is exact at some version; without one, the next watch would
    // start "from now" and silently miss what happened in between.
    throw new MalformedResponseError("list", "metadata.resourceVersion is missing");
  }
  return result;
}

/** A list of another kind than `${expected}List` is an {@linkcode UnexpectedKindError}. */
export function checkListKind(
  result: { kind?: unknown },
  expected: string | undefined,
): void {
  if (!expected || !result.kind || result.kind === "List") return;
  if (result.kind === "PartialObjectMetadataList") return; // metadataOnly: see kindMatches
  if (result.kind !== `${expected}List`) {
    throw new UnexpectedKindError(`${expected}List`, String(result.kind), "");
  }
}

/**
 * The items a list may hand on: each must be an object with a `metadata`
 * object (and a string resourceVersion, if any) and of the expected kind;
 * others are reported and left out, never stored.
 */
function usableItems<T extends KubeObjectLike>(
  items: T[],
  o: ResolvedWatcherOptions,
  phase: ErrorPhase,
): T[] {
  const usable = (item: unknown, i: number): boolean => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      const what = item === null ? "null" : Array.isArray(item) ? "an array" : typeof item;
      report(
        o,
        new MalformedResponseError("list item", `item ${i} is ${what}, not an object`),
        phase,
      );
      return false;
    }
    const problem = metadataProblem(item as { metadata?: unknown });
    if (problem) {
      report(o, new MalformedResponseError("list item", `item ${i}: ${problem}`), phase);
      return false;
    }
    if (!kindMatches(item as T, o.expectedKind)) {
      report(o, unexpectedKind(item as T, o.expectedKind!), "event");
      return false;
    }
    return true;
  };
  let all = true;
  for (let i = 0; i < items.length && all; i++) {
    all = isUsableItem(items[i], o);
  }
  return all ? items : items.filter(usable);
}
