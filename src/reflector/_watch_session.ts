/**
 * One watch request as a pure fold: {@linkcode open} a session for a watch
 * or streaming-list phase, {@linkcode accept} each network read's batch of
 * events into it (validation, ERROR events, the expected kind, a streaming
 * list's keyed pending snapshot, bookmark progress and intervals), and
 * {@linkcode close} it with how the request ended to get the
 * {@linkcode Outcome} the recovery rules (`_watch_machine.ts`) decide on.
 * No I/O, no timers, no clock of its own: time comes in as `now`, and every
 * effect (events to hand on, problems to report, what was learnt about the
 * server) goes out in the result, for `watcher.ts` to perform. Tested as a
 * table in `tests/reflector/watch_session_test.ts`.
 *
 * A session is used linearly: `accept` returns the session that replaces
 * the one it was given (a streaming list's pending snapshot moves along
 * rather than being copied per read).
 *
 * @module
 */
import { MalformedResponseError } from "../api/malformed_response_error.ts";
import { ShortWatchError, UnexpectedKindError } from "../api/errors.ts";
import { INITIAL_EVENTS_END_ANNOTATION, type KubeObjectLike } from "../api/types.ts";
import { kindMatches } from "../api/predicates.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { RequestRefusedError } from "../api/request_refused_error.ts";
import { errorEventError, failureKind, isErrorEvent, retryAfterOf } from "./_failure_kind.ts";
import type { FailureKind, Outcome, Phase } from "./_watch_machine.ts";
import type { WatcherEvent } from "./watcher_event.ts";

/** A watch or streaming-list phase (what {@linkcode open} starts). */
export type WatchPhase = Extract<Phase, { kind: "stream" | "watch" }>;

/** The state of one watch request. */
export interface WatchSession<T extends KubeObjectLike> {
  /** The phase the request performs. */
  readonly phase: WatchPhase;
  /** When the request was made. */
  readonly startedAt: number;
  /** When the watch proper began: the request, or a streaming list's end bookmark. */
  readonly watchStartedAt: number;
  /** A streaming list's initial events, keyed, until its end bookmark; then `undefined`. */
  readonly pending: Map<string, T> | undefined;
  /** The last version seen (a pending event's included). */
  readonly rv: string;
  /** Events that made progress: handed on, or a bookmark that moved the version on. */
  readonly progress: number;
  /** When the last periodic bookmark came (never a streaming list's end bookmark). */
  readonly lastBookmarkAt: number | undefined;
  /** A periodic bookmark or an event came after the watch proper began. */
  readonly established: boolean;
  /** The streaming list's end bookmark arrived. */
  readonly synced: boolean;
}

/** What {@linkcode accept} needs besides the session and the batch. */
export interface AcceptContext<T extends KubeObjectLike> {
  /** Events of another kind are reported and left out. */
  expectedKind?: string;
  /** The request's `timeoutSeconds` in ms: bookmarks close to it are not periodic. */
  timeoutMs: number;
  /**
   * What a pending (streaming-list) object may be replaced with: the
   * consumer's own unchanged copy (`reuseListed`, already judged by the
   * caller), or undefined to keep the received one.
   */
  reuse?: (item: T) => T | undefined;
}

/** What came of one batch. */
export interface Accepted<T extends KubeObjectLike> {
  /** The session after the batch. */
  session: WatchSession<T>;
  /** What to hand on, in order (a `LIST` when the batch held the end bookmark). */
  events: WatcherEvent<T>[];
  /** The version the consumer reaches once it has applied `events`. */
  rv: string;
  /** How many of the batch's events were valid events (each worth an observation) before `stop`. */
  seen: number;
  /** Problems handled without ending the watch (an object of another kind), to report. */
  reports: Error[];
  /** Why the watch must end after `events` are handed on (a malformed event, an ERROR event). */
  stop?: Error;
  /** The end bookmark arrived in this batch: the streaming list's items and how long it took. */
  synced?: { items: number; durationMs: number };
  /** A periodic bookmark came this long after the previous one on this watch. */
  bookmarkGapMs?: number;
  /** This batch made progress on a watch proper (the consumer is current up to it). */
  progressed: boolean;
}

/** Bookmarks further apart than this are not taken for periodic ones. */
export const MAX_BOOKMARK_GAP_MS = 5 * 60_000;

/** kube-apiserver sends a last bookmark 2 s before a watch's timeout; bookmarks this close to it are not periodic. */
const PRE_TIMEOUT_MS = 5_000;

/** Opens a session for `phase`, requested at `now`. */
export function open<T extends KubeObjectLike>(phase: WatchPhase, now: number): WatchSession<T> {
  return {
    phase,
    startedAt: now,
    watchStartedAt: now,
    pending: phase.kind === "stream" ? new Map() : undefined,
    rv: phase.rv,
    progress: 0,
    lastBookmarkAt: undefined,
    established: false,
    synced: false,
  };
}

/**
 * Folds one network read's events into the session. Stops at the first
 * event that cannot be used (`stop`); what came before it is handed on.
 * Never throws, whatever the batch holds.
 */
export function accept<T extends KubeObjectLike>(
  session: WatchSession<T>,
  batch: readonly unknown[],
  now: number,
  ctx: AcceptContext<T>,
): Accepted<T> {
  let { pending, rv, progress, lastBookmarkAt, established, synced, watchStartedAt } = session;
  const events: WatcherEvent<T>[] = [];
  const reports: Error[] = [];
  let outRv: string | undefined;
  let stop: Error | undefined;
  let syncedNow: Accepted<T>["synced"];
  let bookmarkGapMs: number | undefined;
  let progressed = false;
  let seen = 0;
  for (const raw of batch) {
    const problem = eventProblem(raw);
    if (problem) {
      stop = new MalformedResponseError("watch event", problem);
      break;
    }
    const ev = raw as { type: string; object: T };
    if (ev.type === "ERROR") {
      stop = errorEventError(ev.object);
      break;
    }
    const evRv = ev.object.metadata?.resourceVersion;
    if (evRv === undefined || evRv === "") {
      // A watch from "" would start "from now" and miss what happened in between.
      stop = new MalformedResponseError("watch event", "metadata.resourceVersion is missing");
      break;
    }
    seen++;
    if (ev.type === "BOOKMARK") {
      if (evRv !== rv) progress++;
      rv = evRv;
      const endsInitial =
        ev.object.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === "true";
      if (pending && endsInitial) {
        const items = [...pending.values()];
        pending = undefined;
        synced = true;
        syncedNow = { items: items.length, durationMs: now - session.startedAt };
        watchStartedAt = now;
        progress = 1;
        progressed = true;
        events.push({ type: "LIST", items, resourceVersion: rv });
        outRv = rv;
      } else if (!pending) {
        // Two bookmarks on one watch, not the one just before its timeout: the
        // server sends them periodically (1.27+).
        const beforeTimeout = now - session.startedAt >= ctx.timeoutMs - PRE_TIMEOUT_MS;
        if (lastBookmarkAt !== undefined && !beforeTimeout) {
          const gap = now - lastBookmarkAt;
          if (gap <= MAX_BOOKMARK_GAP_MS) bookmarkGapMs = Math.min(bookmarkGapMs ?? gap, gap);
        }
        lastBookmarkAt = now;
        established = true;
        progressed = true;
        events.push({ type: "BOOKMARK", resourceVersion: rv });
        outRv = rv;
      }
    } else if (!kindMatches(ev.object, ctx.expectedKind)) {
      reports.push(unexpectedKind(ev.object, ctx.expectedKind!));
    } else if (pending) {
      // The pending snapshot is keyed, as client-go's temporary store: a
      // MODIFIED replaces, a DELETED removes what the initial events added.
      const key = objectKey(ev.object);
      if (ev.type === "DELETED") pending.delete(key);
      else pending.set(key, ctx.reuse?.(ev.object) ?? ev.object);
      rv = evRv;
    } else {
      rv = evRv;
      progress++;
      established = true;
      progressed = true;
      events.push({
        type: ev.type as "ADDED" | "MODIFIED" | "DELETED",
        object: ev.object,
        resourceVersion: rv,
      });
      outRv = rv;
    }
  }
  return {
    session: {
      phase: session.phase,
      startedAt: session.startedAt,
      watchStartedAt,
      pending,
      rv,
      progress,
      lastBookmarkAt,
      established,
      synced,
    },
    events,
    rv: outRv ?? "",
    seen,
    reports,
    stop,
    synced: syncedNow,
    bookmarkGapMs,
    progressed,
  };
}

/** How a watch request ended, for {@linkcode close}. */
export interface Ending {
  /** Why it failed; `undefined` for a clean close. */
  error?: unknown;
  /** The last version the consumer applied (what a rewatch or relist starts from). */
  applied: string;
}

/** What {@linkcode close} decides. */
export interface Closed {
  /** What the recovery rules decide on. */
  outcome: Outcome;
  /** The error to report (`undefined`: nothing to report); already labelled for the user. */
  report?: unknown;
  /** The request phase the report belongs to: a streaming list before its end bookmark is a list. */
  reportPhase: "list" | "watch";
  /** The watch closed cleanly too soon with nothing (a short watch). */
  short: boolean;
  /** How long the watch proper lasted. */
  durationMs: number;
  /** Events that made progress. */
  events: number;
  /** The failure's classification, when it failed. */
  failure?: FailureKind;
  /** A `Retry-After` the server sent with the failure, in ms (validated, not capped). */
  retryAfterMs?: number;
}

/** The limits {@linkcode close} needs. */
export interface CloseLimits {
  /** A watch shorter than this with no event is a short watch. */
  shortWatchMs: number;
}

/**
 * Closes the session: a clean end, or a failure classified for the
 * recovery rules (`failureKind`), with what to report.
 */
export function close<T extends KubeObjectLike>(
  session: WatchSession<T>,
  ending: Ending,
  now: number,
  limits: CloseLimits,
): Closed {
  const durationMs = now - session.watchStartedAt;
  const events = session.progress;
  const synced = session.synced || undefined;
  const reportPhase = session.pending ? "list" : "watch";
  if (ending.error === undefined) {
    const short = !session.pending && events === 0 && durationMs < limits.shortWatchMs;
    const report = session.pending
      ? new MalformedResponseError(
        "streaming list",
        "the watch ended before its initial-events-end bookmark; staying unsynced and retrying",
      )
      : short
      ? new ShortWatchError(durationMs)
      : undefined;
    return {
      outcome: { kind: "ended", rv: ending.applied, events, durationMs, synced },
      report,
      reportPhase,
      short,
      durationMs,
      events,
    };
  }
  const err = ending.error;
  const failure = failureKind(err, session.pending !== undefined);
  const refused = failure === "refused" && err instanceof KubeStatusError && !isErrorEvent(err);
  return {
    outcome: { kind: "failed", failure, rv: ending.applied, events, durationMs, synced },
    report: refused ? new RequestRefusedError(session.pending ? "list" : "watch", err) : err,
    reportPhase,
    short: false,
    durationMs,
    events,
    failure,
    retryAfterMs: retryAfterOf(err),
  };
}

const EVENT_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]);

/** Why a watch event cannot be used, or undefined. */
function eventProblem(ev: unknown): string | undefined {
  const e = ev as { type?: unknown; object?: unknown } | null;
  if (e === null || typeof e !== "object") return "not an object";
  const obj = e.object as { metadata?: unknown } | null;
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    return "object is not an object";
  }
  if (e.type === "ERROR") return undefined;
  if (!EVENT_TYPES.has(e.type as string)) return "unknown event type";
  return metadataProblem(obj);
}

/** Why an object's metadata cannot be used, or undefined. */
export function metadataProblem(obj: { metadata?: unknown }): string | undefined {
  const m = obj.metadata as { resourceVersion?: unknown } | null | undefined;
  if (m === null || typeof m !== "object" || Array.isArray(m)) return "metadata is not an object";
  if (m.resourceVersion !== undefined && typeof m.resourceVersion !== "string") {
    return "metadata.resourceVersion is not a string";
  }
  return undefined;
}

/** The key of an object within one resource: `namespace/name`, or `name` when cluster-scoped. */
function objectKey(obj: KubeObjectLike): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ""}` : `${m.name ?? ""}`;
}

/** The error for an object of another kind than expected. */
export function unexpectedKind(obj: KubeObjectLike, expected: string): UnexpectedKindError {
  const m = obj.metadata ?? {};
  return new UnexpectedKindError(
    expected,
    typeof obj.kind === "string" ? obj.kind : "",
    m.namespace ? `${m.namespace}/${m.name}` : m.name ?? "",
  );
}
