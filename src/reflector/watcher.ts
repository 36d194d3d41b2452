import {
  ListTimeoutError,
  ShortWatchError,
  UnexpectedKindError,
  WatchIdleTimeoutError,
} from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { isExpired, isTooLargeResourceVersion } from "../api/predicates.ts";
import { INITIAL_EVENTS_END_ANNOTATION, type KubeObject, type Status } from "../api/types.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import { childAbortController, delay } from "./_async.ts";
import { listAllPages, type ListResult } from "./list_pager.ts";
import {
  kindMatches,
  type ResolvedWatcherOptions,
  resolveWatcherOptions,
} from "./_resolve_watcher_options.ts";
import type { WatcherOptions } from "./watcher_options.ts";

/**
 * What the watcher yields. `LIST` is a complete, consistent snapshot that
 * replaces everything known before (the first list, every relist, the end of
 * a streaming list); the others are changes after it, in order. Every event
 * carries the resourceVersion to resume from once it has been applied.
 *
 * @example
 * ```ts
 * import type { WatcherEvent } from "./watcher.ts";
 * function describe(ev: WatcherEvent): string {
 *   switch (ev.type) {
 *     case "LIST":
 *       return `snapshot of ${ev.items.length} at ${ev.resourceVersion}`;
 *     case "BOOKMARK":
 *       return `at ${ev.resourceVersion}`;
 *     default:
 *       return `${ev.type} ${ev.object.metadata.name} at ${ev.resourceVersion}`;
 *   }
 * }
 * console.log(describe({ type: "BOOKMARK", resourceVersion: "12" })); // at 12
 * ```
 */
export type WatcherEvent<T extends KubeObject = KubeObject> =
  | { type: "LIST"; items: T[]; resourceVersion: string }
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: T; resourceVersion: string }
  | { type: "BOOKMARK"; resourceVersion: string };

/** What follows a watch: rewatch from the last version, relist, or give up streaming lists; after `wait` ms. */
type Step = { next: "rewatch" | "relist" | "fallback"; wait: number };

/**
 * The reflector's state machine without a store: list (or streaming list),
 * then watch from the list's resourceVersion, forever. It rewatches from the
 * last resourceVersion after a clean close, a dropped connection, a 429/5xx
 * (honouring Retry-After), a malformed stream or a half-open connection; it
 * relists only when the version is gone (410). Errors go to `onError`, never
 * out of the generator; aborting `signal` makes it throw `signal.reason`.
 *
 * @example
 * ```ts
 * import { KubeClient, resourceListerWatcher, watcher } from "../../mod.ts";
 * const lw = resourceListerWatcher(new KubeClient({ server: "http://127.0.0.1:8001" }), { apiVersion: "v1", resource: "configmaps" });
 * const ac = new AbortController();
 * for await (const ev of watcher(lw, { signal: ac.signal, expectedKind: "ConfigMap" })) {
 *   if (ev.type === "LIST") console.log("snapshot", ev.items.length, ev.resourceVersion);
 *   else if (ev.type !== "BOOKMARK") console.log(ev.type, ev.object.metadata.name);
 * }
 * ```
 */
export async function* watcher<T extends KubeObject = KubeObject>(
  lw: ListerWatcher<T>,
  options: WatcherOptions | ResolvedWatcherOptions = {},
): AsyncGenerator<WatcherEvent<T>, void, undefined> {
  const o = resolveWatcherOptions(options);
  const { signal, clock, backoff, onError, observer } = o;
  const report = (err: unknown, phase: "list" | "watch" | "event") => {
    try {
      onError(err, phase);
    } catch { /* an error handler's own failure must not stop the watcher */ }
  };
  const waitAfter = (err: unknown): number =>
    Math.max(backoff.next(), err instanceof KubeStatusError ? err.retryAfterMs ?? 0 : 0);

  let rv = o.initialResourceVersion;
  let synced = false;
  let rvUnavailable = false;
  let streaming = o.useStreamingList;
  observer.relist?.("initial");

  while (true) {
    signal?.throwIfAborted();
    if (!synced && !streaming) {
      const listRv = rvUnavailable ? "" : rv === "" ? "0" : rv;
      const started = clock.now();
      let result: ListResult<T>;
      try {
        result = await listWithDeadline(lw, listRv, o);
        checkListKind(result, o.expectedKind);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        observer.listFailed?.({ durationMs: clock.now() - started, error: err });
        report(err, "list");
        observer.relist?.("list-failed");
        if ((isExpired(err) || isTooLargeResourceVersion(err)) && !rvUnavailable && listRv !== "") {
          rvUnavailable = true; // retry at once as a consistent read, as client-go does
          continue;
        }
        await delay(waitAfter(err), signal, clock);
        continue;
      }
      observer.listDone?.({
        durationMs: clock.now() - started,
        items: result.items.length,
        resourceVersion: result.resourceVersion,
      });
      const items = keepExpectedKind(result.items, o.expectedKind, (e) => report(e, "event"));
      rvUnavailable = false;
      synced = true;
      rv = result.resourceVersion;
      yield { type: "LIST", items, resourceVersion: rv };
    }

    const step = yield* watchOnce(lw, o, streaming && !synced && rvUnavailable ? "" : rv, !synced, {
      setRv: (v) => (rv = v),
      setSynced: () => (synced = true),
      report,
    });
    if (step.next === "fallback") {
      streaming = false;
      observer.relist?.("streaming-fallback");
    } else if (step.next === "relist") {
      if (!synced) rvUnavailable = true; // a streaming list's version is gone
      synced = false;
      observer.relist?.("expired");
    }
    if (step.wait > 0) await delay(step.wait, signal, clock);
  }

  /** One watch request; returns what to do next (undefined: rewatch now). */
  async function* watchOnce(
    lw: ListerWatcher<T>,
    o: ResolvedWatcherOptions,
    fromRv: string,
    initial: boolean,
    ctx: {
      setRv: (rv: string) => void;
      setSynced: () => void;
      report: (err: unknown, phase: "list" | "watch" | "event") => void;
    },
  ): AsyncGenerator<WatcherEvent<T>, Step, undefined> {
    const { signal, clock, observer } = o;
    const timeoutSeconds = Math.max(1, Math.floor((o.minWatchTimeoutMs / 1000) * (1 + o.random())));
    const idleMs = o.idleTimeoutMs ?? timeoutSeconds * 1000 + o.idleGraceMs;
    const { controller, dispose } = childAbortController(signal);
    let last = clock.now();
    const started = last;
    let handle: unknown;
    let paused = false; // time the consumer spends on an event is not idle time
    const checkIdle = () => {
      if (paused) {
        handle = clock.setTimeout(checkIdle, idleMs);
        return;
      }
      const idle = clock.now() - last;
      if (idle >= idleMs) controller.abort(new WatchIdleTimeoutError(idleMs));
      else handle = clock.setTimeout(checkIdle, idleMs - idle);
    };
    handle = clock.setTimeout(checkIdle, idleMs);
    let events = 0;
    let collected: T[] | undefined = initial ? [] : undefined;
    let rv = fromRv;
    observer.watchStart?.();
    try {
      const stream = lw.watch({
        resourceVersion: rv,
        timeoutSeconds,
        allowWatchBookmarks: true,
        sendInitialEvents: initial || undefined,
        resourceVersionMatch: initial ? "NotOlderThan" : undefined,
        signal: controller.signal,
      });
      for await (const ev of stream) {
        last = clock.now();
        if (ev.type === "ERROR") throw statusError(ev.object);
        events++;
        const evRv = ev.object.metadata.resourceVersion ?? rv;
        observer.event?.(ev.type, evRv);
        if (ev.type === "BOOKMARK") {
          rv = evRv;
          if (
            collected && ev.object.metadata.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === "true"
          ) {
            const items = collected;
            collected = undefined;
            ctx.setRv(rv);
            ctx.setSynced();
            observer.listDone?.({
              durationMs: clock.now() - started,
              items: items.length,
              resourceVersion: rv,
            });
            paused = true;
            yield { type: "LIST", items, resourceVersion: rv };
            paused = false;
          } else if (!collected) {
            ctx.setRv(rv);
            paused = true;
            yield { type: "BOOKMARK", resourceVersion: rv };
            paused = false;
          }
        } else if (!kindMatches(ev.object, o.expectedKind)) {
          ctx.report(unexpectedKind(ev.object, o.expectedKind!), "event");
        } else if (collected) {
          if (ev.type !== "DELETED") collected.push(ev.object);
          rv = evRv;
        } else {
          rv = evRv;
          ctx.setRv(rv);
          paused = true;
          yield { type: ev.type, object: ev.object, resourceVersion: rv };
          paused = false;
        }
        last = clock.now();
      }
      const durationMs = clock.now() - started;
      const short = events === 0 && durationMs < o.shortWatchMs;
      if (short || collected) {
        const err = short ? new ShortWatchError(durationMs) : new Error(
          "streaming list ended before its initial-events-end bookmark; staying unsynced and retrying",
        );
        observer.watchEnd?.({ durationMs, events, error: err, short });
        ctx.report(err, "watch");
        return { next: "rewatch", wait: o.backoff.next() };
      }
      observer.watchEnd?.({ durationMs, events, short: false });
      return { next: "rewatch", wait: 0 };
    } catch (caught) {
      if (signal?.aborted) throw signal.reason;
      const err = controller.signal.aborted ? controller.signal.reason : caught;
      observer.watchEnd?.({ durationMs: clock.now() - started, events, error: err, short: false });
      ctx.report(err, "watch");
      if (initial && isStreamingUnsupported(err)) return { next: "fallback", wait: 0 };
      if (isExpired(err)) {
        // Relist at once after a watch that was healthy for a while; back off
        // when a fresh watch is refused at once, so that a server answering
        // 410 to everything cannot drive a list/watch hot loop.
        const healthy = events > 0 || clock.now() - started >= o.shortWatchMs;
        return { next: "relist", wait: healthy && !initial ? 0 : o.backoff.next() };
      }
      return {
        next: "rewatch",
        wait: Math.max(
          o.backoff.next(),
          err instanceof KubeStatusError ? err.retryAfterMs ?? 0 : 0,
        ),
      };
    } finally {
      clock.clearTimeout(handle);
      dispose();
    }
  }
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
async function listWithDeadline<T extends KubeObject>(
  lw: ListerWatcher<T>,
  resourceVersion: string,
  o: ResolvedWatcherOptions,
): Promise<ListResult<T>> {
  const timed: ListerWatcher<T> = {
    watch: (opts) => lw.watch(opts),
    list: async (opts) => {
      const { controller, dispose } = childAbortController(o.signal);
      const timeout = new ListTimeoutError(o.listTimeoutMs);
      const handle = o.clock.setTimeout(() => controller.abort(timeout), o.listTimeoutMs);
      try {
        return await lw.list({ ...opts, signal: controller.signal });
      } catch (err) {
        if (controller.signal.reason === timeout) throw timeout;
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
  });
}

function statusError(status: Status): KubeStatusError {
  const seconds = status.details?.retryAfterSeconds;
  return new KubeStatusError({
    code: typeof status.code === "number" ? status.code : 500,
    request: "watch ERROR event",
    status,
    retryAfterMs: seconds === undefined ? undefined : seconds * 1000,
  });
}

function unexpectedKind(obj: KubeObject, expected: string): UnexpectedKindError {
  const m = obj.metadata ?? {};
  return new UnexpectedKindError(
    expected,
    obj.kind ?? "",
    m.namespace ? `${m.namespace}/${m.name}` : m.name ?? "",
  );
}

function checkListKind(result: ListResult<KubeObject>, expected: string | undefined): void {
  if (!expected || !result.kind || result.kind === "List") return;
  if (result.kind !== `${expected}List`) {
    throw new UnexpectedKindError(`${expected}List`, result.kind, "");
  }
}

function keepExpectedKind<T extends KubeObject>(
  items: T[],
  expected: string | undefined,
  report: (e: unknown) => void,
): T[] {
  if (!expected || items.every((i) => kindMatches(i, expected))) return items;
  return items.filter((i) => {
    if (kindMatches(i, expected)) return true;
    report(unexpectedKind(i, expected));
    return false;
  });
}

function isStreamingUnsupported(err: unknown): boolean {
  return err instanceof KubeStatusError &&
    (err.code === 422 || err.code === 400 || err.code === 403 ||
      err.code === 404 || err.code === 405 || err.code === 501);
}
