/**
 * The watcher's recovery rules as one pure transition function: given the
 * phase the watcher was in and what came of performing it, `next` says
 * which phase comes next and which wait comes before it. Every rule of
 * what to do *between* requests lives here as one `(phase, outcome)` case;
 * what one watch request means event by event is the other pure function,
 * `_watch_session.ts`, and how an error is classified is `_failure_kind.ts`.
 * `watcher.ts` only performs phases, turns wait kinds into milliseconds
 * and yields events. Tested as a table in `tests/reflector/watch_machine_test.ts`.
 *
 * @module
 */
import type { RelistReason } from "./watcher_options.ts";

/** What the watcher does next. `rv` is the resourceVersion sent with the request. */
export type Phase =
  /** A LIST (paginated at `"0"` or `""`, unpaginated at a specific version). `""` is a consistent read. */
  | { kind: "list"; rv: string }
  /**
   * A streaming list (`sendInitialEvents`): initial events collected into a
   * keyed pending snapshot until the end bookmark. `listRv` is what a plain
   * LIST would ask for if streaming is given up; `failures` counts streaming
   * attempts that failed in a row.
   */
  | { kind: "stream"; rv: string; listRv: string; failures: number }
  /**
   * A watch from `rv`. `waited`: the watch starts after a wait (a backoff
   * after a failure), not straight after a list or a clean close.
   */
  | { kind: "watch"; rv: string; waited: boolean };

/**
 * Why a request failed, as far as recovery is concerned.
 * - `expired`: the version is gone (410 Expired/Gone, 504 ResourceVersionTooLarge).
 * - `unsupported`: the server refused a streaming list (400/403/404/405/422/501).
 * - `no-answer`: no answer at all (connection refused or reset, DNS, TLS, idle deadline): cheap to retry.
 * - `answered`: the server answered with an error worth retrying as it was (429, 5xx) or too slowly
 *   (list deadline).
 * - `refused`: the server refused the request for a reason waiting will not change (a 4xx other than
 *   410 and 429: 401, 403, 404, 405, 422...): a watch is not retried as a watch but relisted.
 * - `bad-data`: the answer could not be used (a malformed line or list, a Status as data, an
 *   ERROR event that is not a 410, a store that could not apply an event): the next step is a relist.
 * - `bug`: an unexpected exception (ours, or a `ListerWatcher` that breaks its contract).
 */
export type FailureKind =
  | "expired"
  | "unsupported"
  | "no-answer"
  | "answered"
  | "refused"
  | "bad-data"
  | "bug";

/** What came of performing a phase. */
export type Outcome =
  /** A LIST completed at `rv`. */
  | { kind: "listed"; rv: string }
  /**
   * A watch or streaming list closed cleanly; `rv` is the last version it
   * delivered, `events` how many events made progress, `durationMs` how long
   * it watched (for a streaming list that synced: since its end bookmark).
   * `synced`: a streaming list whose end bookmark arrived (the request went
   * on as a watch, and its end is a watch's).
   */
  | { kind: "ended"; rv: string; events: number; durationMs: number; synced?: boolean }
  /** A request failed. For a watch, `rv` is the last version it delivered. */
  | {
    kind: "failed";
    failure: FailureKind;
    rv: string;
    events: number;
    durationMs: number;
    synced?: boolean;
  };

/**
 * The wait before the next phase: none, the reconnect backoff (short: for
 * requests that reached no server), or the backoff (client-go's, for lists
 * and for servers that answered with an error; with `Retry-After` honoured).
 */
export type WaitKind = "none" | "reconnect" | "backoff";

/** The watcher's state: the phase, and whether streaming lists are still in use. */
export interface MachineState {
  phase: Phase;
  /** Streaming lists in use (`useStreamingList`, and the server has not refused them). */
  streaming: boolean;
}

/** The limits `next` needs. */
export interface MachineLimits {
  /** A watch shorter than this with no event is a short watch. */
  shortWatchMs: number;
  /** Streaming attempts that may fail in a row before one plain LIST is used instead. */
  streamingListAttempts: number;
}

/** The result of {@linkcode next}. */
export interface Transition {
  state: MachineState;
  wait: WaitKind;
  /** Set when the next phase is a list (or a streaming list), with its reason. */
  relist?: RelistReason;
}

/**
 * The first phase: a list (or a streaming list) from `initialRv`, or from
 * `"0"` when none is known (from `""`, a consistent read, when `consistent`);
 * or, given `resumeRv` (the consumer holds a complete state at that version),
 * a watch from it. That watch counts as started after a wait: nothing
 * precedes it, so a 410 relists at once.
 */
export function initialState(
  initialRv: string,
  useStreamingList: boolean,
  resumeRv = "",
  consistent = false,
): MachineState {
  if (resumeRv) {
    return { phase: { kind: "watch", rv: resumeRv, waited: true }, streaming: useStreamingList };
  }
  const listRv = consistent ? "" : initialRv || "0";
  return {
    phase: listPhase(useStreamingList, consistent ? "" : initialRv, listRv),
    streaming: useStreamingList,
  };
}

/** The phase that lists at `listRv` (streaming from `streamRv` when streaming is on). */
function listPhase(streaming: boolean, streamRv: string, listRv: string): Phase {
  return streaming
    ? { kind: "stream", rv: streamRv, listRv, failures: 0 }
    : { kind: "list", rv: listRv };
}

/** A relist from `rv`, the last version the consumer has applied. */
function relist(state: MachineState, rv: string, wait: WaitKind, reason: RelistReason): Transition {
  return { state: { ...state, phase: listPhase(state.streaming, rv, rv) }, wait, relist: reason };
}

/**
 * The transition function: every recovery rule of the watcher.
 *
 * - A list that fails with `expired` at a specific version retries at once as
 *   a consistent read (`""`), as client-go does; any other failure retries
 *   the same list after the backoff.
 * - A watch that closes cleanly rewatches from its last version at once; one
 *   that closes within `shortWatchMs` (whatever it delivered: no healthy
 *   server ends a watch that soon) after the backoff.
 * - A watch that gets no answer rewatches after the reconnect backoff; one
 *   answered with an error worth retrying (429, 5xx) rewatches after the
 *   backoff (and `Retry-After`); neither relists. One refused for good (403
 *   from a role that may list but not watch, 404, any 4xx but 410 and 429)
 *   relists after the backoff, as client-go does (it retries only
 *   connection-refused and 429 as a watch): the store stays within one
 *   backoff of the server.
 * - A watch answered 410 relists from its last version at once if it had
 *   lived `shortWatchMs`, or if it started after a wait (after an outage:
 *   one wait, never two); a 410 within `shortWatchMs` of a watch that
 *   started without waiting (straight after a list or a clean close: a
 *   server whose versions expire at once) relists after the backoff. So no
 *   sequence of answers makes requests without a wait in a loop.
 * - A malformed event, an ERROR event that is not a 410, a failure to apply
 *   an event, or a bug: relist from the last applied version after the
 *   backoff (client-go's rule: the stream cannot be trusted past that point).
 * - A streaming list refused by the server falls back to LIST for good; one
 *   refused for another reason (a role without `watch`, which a streaming
 *   list needs) is replaced at once by one plain LIST; one that fails or
 *   ends before its end bookmark `streamingListAttempts` times in a row is
 *   replaced by one plain LIST (the next relist streams again). A streaming
 *   list that synced and then ended or failed is judged as the watch it became.
 */
export function next(state: MachineState, outcome: Outcome, limits: MachineLimits): Transition {
  const t = decide(state, outcome, limits);
  const p = t.state.phase;
  if (p.kind !== "watch") return t;
  return { ...t, state: { ...t.state, phase: { ...p, waited: t.wait !== "none" } } };
}

function decide(state: MachineState, outcome: Outcome, limits: MachineLimits): Transition {
  const { phase } = state;
  switch (phase.kind) {
    case "list": {
      if (outcome.kind === "listed") {
        return {
          state: { ...state, phase: { kind: "watch", rv: outcome.rv, waited: false } },
          wait: "none",
        };
      }
      if (outcome.kind !== "failed") return bugOutcome(state, phase.rv);
      if (outcome.failure === "expired") {
        return {
          state: { ...state, phase: { kind: "list", rv: "" } },
          wait: phase.rv === "" ? "backoff" : "none",
          relist: "expired",
        };
      }
      return { state, wait: "backoff", relist: "list-failed" };
    }
    case "stream": {
      if (outcome.kind === "listed") return bugOutcome(state, phase.rv);
      if (outcome.synced) {
        const watching = { kind: "watch", rv: outcome.rv, waited: false } as const;
        return decide({ ...state, phase: watching }, outcome, limits);
      }
      if (outcome.kind === "failed" && outcome.failure === "unsupported") {
        return {
          state: { streaming: false, phase: { kind: "list", rv: phase.listRv } },
          wait: "none",
          relist: "streaming-fallback",
        };
      }
      if (outcome.kind === "failed" && outcome.failure === "refused") {
        return {
          state: { ...state, phase: { kind: "list", rv: phase.listRv } },
          wait: "none",
          relist: "list-failed",
        };
      }
      if (outcome.kind === "failed" && outcome.failure === "expired") {
        return {
          state: { ...state, phase: { ...phase, rv: "", listRv: "" } },
          wait: phase.rv === "" ? "backoff" : "none",
          relist: "expired",
        };
      }
      const failures = phase.failures + 1;
      if (failures >= limits.streamingListAttempts) {
        return {
          state: { ...state, phase: { kind: "list", rv: phase.listRv } },
          wait: "backoff",
          relist: "streaming-fallback",
        };
      }
      return {
        state: { ...state, phase: { ...phase, failures } },
        wait: "backoff",
        relist: "list-failed",
      };
    }
    case "watch": {
      if (outcome.kind === "listed") return bugOutcome(state, phase.rv);
      const rewatch = (wait: WaitKind): Transition => ({
        state: { ...state, phase: { kind: "watch", rv: outcome.rv, waited: false } },
        wait,
      });
      const quick = outcome.durationMs < limits.shortWatchMs;
      if (outcome.kind === "ended") return rewatch(quick ? "backoff" : "none");
      switch (outcome.failure) {
        case "expired":
          return relist(state, outcome.rv, quick && !phase.waited ? "backoff" : "none", "expired");
        case "no-answer":
          return rewatch("reconnect");
        case "answered":
        case "unsupported":
          return rewatch("backoff");
        case "refused":
        case "bad-data":
        case "bug":
          return relist(state, outcome.rv, "backoff", "watch-failed");
      }
    }
  }
}

/** An outcome that cannot follow the phase (a bug): relist after the backoff. */
function bugOutcome(state: MachineState, rv: string): Transition {
  return relist(state, rv, "backoff", "watch-failed");
}
