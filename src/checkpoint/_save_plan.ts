/**
 * What a save writes, decided from the stored head and what the caller
 * has: a pure function, tested as a table (`tests/checkpoint/save_plan_test.ts`).
 *
 * @module
 */
import type { Head } from "./_head.ts";

/** The compaction and version-marker rules (see `CHECKPOINT_DEFAULTS`). */
export interface SavePolicy {
  maxLogEntries: number;
  maxLogRatio: number;
  versionMarkerIntervalMs: number;
}

/** What is stored under the key now, as far as a save cares. */
export type StoredHead =
  | { kind: "head"; head: Head; savedAtMs: number }
  /** Nothing, a version 1 checkpoint, or a value that cannot be appended to (overwritten). */
  | { kind: "other"; obsolete?: string[] };

/** What the caller hands to a save. */
export interface SaveInput {
  /** The version the complete objects are exact at; `""` when there are none (a first list in progress). */
  resourceVersion: string;
  /** The net changes since `since`: how many, and the encoded piece's size. */
  changes?: { since: string; count: number; bytes: number };
  /** A list in progress: the pages not yet saved, from the continue token `since` (undefined: from the start). */
  progress?: { since?: string; resourceVersion: string };
  /** Whether a list completed in this run (a list in progress stored is then moot). */
  listed: boolean;
  /** Replace the stored objects whatever their version (they are ahead of the server). */
  replace?: boolean;
}

/** What to do with the complete objects (`"drop"`: remove them, they are not to be trusted and there are none to replace them yet). */
export type StateWrite = "keep" | "version" | "log" | "base" | "drop";
/** What to do with a stored list in progress. */
export type PartialWrite = "keep" | "clear" | "append" | "restart";

/** The decision. */
export interface SavePlan {
  state: StateWrite;
  partial: PartialWrite;
  /** Why, in a few words (for tests and debugging). */
  why: string;
}

/** A resourceVersion as an integer, or undefined when it is not one. */
function integer(rv: string): bigint | undefined {
  return /^\d{1,30}$/.test(rv) ? BigInt(rv) : undefined;
}

/** Whether `a` is at or after `b` (equal when they are not integers). */
export function atOrAfter(a: string, b: string): boolean {
  const x = integer(a), y = integer(b);
  return x !== undefined && y !== undefined ? x >= y : a === b;
}

/** Decides what a save writes. */
export function planSave(
  stored: StoredHead,
  input: SaveInput,
  policy: SavePolicy,
  nowMs: number,
): SavePlan {
  const head = stored.kind === "head" ? stored.head : undefined;
  const rv = input.resourceVersion;
  if (
    !input.replace && head?.base && rv !== "" && atOrAfter(head.resourceVersion, rv) &&
    head.resourceVersion !== rv
  ) {
    return { state: "keep", partial: "keep", why: "a newer save is stored" };
  }
  let state: StateWrite;
  let why: string;
  if (rv === "") {
    state = input.replace && head?.base ? "drop" : "keep";
    why = state === "drop" ? "the stored objects are not to be trusted" : "no complete objects";
  } else if (!head?.base || input.replace) {
    state = "base";
    why = input.replace ? "the stored objects are not to be trusted" : "no snapshot to append to";
  } else if (head.resourceVersion === rv) {
    state = "keep";
    why = "the stored version is this one";
  } else if (
    !input.changes || !atOrAfter(head.resourceVersion, input.changes.since) ||
    !atOrAfter(rv, head.resourceVersion)
  ) {
    state = "base";
    why = "the changes do not continue the stored version";
  } else if (input.changes.count === 0) {
    const age = stored.kind === "head" ? nowMs - stored.savedAtMs : 0;
    state = age >= policy.versionMarkerIntervalMs ? "version" : "keep";
    why = state === "version" ? "no change; the version is old" : "no change";
  } else {
    const logBytes = head.log.reduce((n, e) => n + e.bytes, 0) + input.changes.bytes;
    if (head.log.length + 1 > policy.maxLogEntries) {
      state = "base";
      why = "the log is too long";
    } else if (logBytes > policy.maxLogRatio * head.base.bytes) {
      state = "base";
      why = "the log is too big for its snapshot";
    } else {
      state = "log";
      why = "changes";
    }
  }
  let partial: PartialWrite = "keep";
  const p = input.progress;
  if (p) {
    const stored = head?.partial;
    if (p.since === undefined) partial = "restart";
    else if (
      stored && stored.continue === p.since && stored.resourceVersion === p.resourceVersion
    ) {
      partial = "append";
    } // else: another run moved the list on meanwhile; these pages are dropped
  } else if (head?.partial) {
    // a list in progress is moot once a list completed, or once the complete
    // objects are at or past its version (going on with it would go back in time)
    const after = state === "keep" ? head.resourceVersion : state === "drop" ? "" : rv;
    if (input.listed || (after !== "" && atOrAfter(after, head.partial.resourceVersion))) {
      partial = "clear";
    }
  }
  return { state, partial, why };
}
