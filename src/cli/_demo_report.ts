/**
 * The demo's words: the live status line (a terminal), the plain progress
 * line (no terminal) and the summary. Pure functions of what was counted.
 *
 * @module
 */

/** What the status shows at one moment. */
export interface DemoSnapshot {
  /** Since the churn started, in ms. */
  elapsedMs: number;
  /** Objects in the store. */
  objects: number;
  /** Change events per second, lately. */
  eventsPerSecond: number;
  /** Lists after the first. */
  relists: number;
  /** Watches that followed a watch. */
  reconnects: number;
  /** The store's resourceVersion. */
  resourceVersion: string;
  /** Since the last change event, in ms; `undefined` before the first. */
  sinceLastEventMs: number | undefined;
  /** Faults that took effect. */
  faults: number;
}

/** The terminal's clear-to-end-of-line sequence. */
export const CLEAR_LINE = "\r\x1b[K";

/** `0.4s`, `12.0s`, `2m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1_000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const whole = Math.floor(s);
  if (whole < 3_600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, "0")}s`;
  return `${Math.floor(whole / 3_600)}h${String(Math.floor(whole / 60) % 60).padStart(2, "0")}m`;
}

function since(ms: number | undefined): string {
  return ms === undefined ? "none yet" : `${formatDuration(ms)} ago`;
}

/**
 * The live line for a terminal (written after {@linkcode CLEAR_LINE}, no
 * newline), at most `width - 1` characters so that it never wraps (a
 * wrapped line cannot be rewritten in place): the full words when they fit,
 * else a compact form, else the compact form cut.
 */
export function statusLine(s: DemoSnapshot, width = 80): string {
  const rate = Math.round(s.eventsPerSecond);
  const rv = s.resourceVersion || "-";
  const full = [
    formatDuration(s.elapsedMs),
    `${s.objects} objects`,
    `${rate} events/s`,
    `rv ${rv}`,
    `last event ${since(s.sinceLastEventMs)}`,
    `relists ${s.relists}`,
    `reconnects ${s.reconnects}`,
    `faults ${s.faults}`,
  ].join(" · ");
  const max = Math.max(1, width - 1);
  if (full.length <= max) return full;
  const last = s.sinceLastEventMs === undefined ? "-" : formatDuration(s.sinceLastEventMs);
  const compact =
    `${formatDuration(s.elapsedMs)} ${s.objects} obj ${rate} ev/s rv ${rv} (${last} ago) ` +
    `relists ${s.relists} reconn ${s.reconnects} faults ${s.faults}`;
  return compact.length <= max ? compact : compact.slice(0, max);
}

/** A progress line without a terminal: `key=value` pairs, with a newline. */
export function plainLine(s: DemoSnapshot): string {
  const last = s.sinceLastEventMs === undefined ? "none" : formatDuration(s.sinceLastEventMs);
  return `[${formatDuration(s.elapsedMs)}] objects=${s.objects} events/s=${
    Math.round(s.eventsPerSecond)
  } ` +
    `relists=${s.relists} reconnects=${s.reconnects} rv=${s.resourceVersion || "-"} ` +
    `last-event=${last} faults=${s.faults}\n`;
}

/** `3: initial 1, expired 2` from counts by name (zeros left out). */
export function tally(counts: Iterable<[string, number]>): string {
  let total = 0;
  const parts: string[] = [];
  for (const [name, n] of counts) {
    total += n;
    if (n > 0) parts.push(`${name} ${n}`);
  }
  return parts.length === 0 ? `${total}` : `${total}: ${parts.join(", ")}`;
}

/** What the summary reports. */
export interface DemoSummary {
  elapsedMs: number;
  seed: number;
  writes: Record<string, number>;
  events: Record<string, number>;
  lists: Iterable<[string, number]>;
  reconnects: number;
  faults: Iterable<[string, number]>;
  errors: Iterable<[string, number]>;
  serverObjects: number;
  serverResourceVersion: string;
  storeObjects: number;
  storeResourceVersion: string;
  /** False when the store had not reached the server's version within the catch-up bound. */
  caughtUp: boolean;
}

/** The summary's lines (each ends with a newline). */
export function summaryLines(s: DemoSummary): string[] {
  const { BOOKMARK = 0, ...changes } = s.events;
  const row = (name: string, text: string) => `  ${name.padEnd(11)} ${text}\n`;
  return [
    "summary:\n",
    row("elapsed", `${formatDuration(s.elapsedMs)} (seed ${s.seed})`),
    row("writes", tally(Object.entries(s.writes))),
    row("events", `${tally(Object.entries(changes))}; bookmarks ${BOOKMARK}`),
    row("lists", tally(s.lists)),
    row("reconnects", String(s.reconnects)),
    row("faults", tally(s.faults)),
    row("errors", `${tally(s.errors)} (all handled)`),
    row("server", `${s.serverObjects} ConfigMaps at resourceVersion ${s.serverResourceVersion}`),
    row(
      "store",
      `${s.storeObjects} ConfigMaps at resourceVersion ${s.storeResourceVersion || "-"}` +
        (s.caughtUp ? "" : " (did not catch up in time)"),
    ),
  ];
}
