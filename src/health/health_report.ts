/**
 * What a probe of the health endpoint finds: the judgement of each
 * informer and check (pure: the informers' status and a time in, a report
 * out), and its two renderings, kube-apiserver's verbose text and JSON.
 *
 * @module
 */
import type { ErrorPhase, WatcherState } from "../reflector/watcher_options.ts";
import { sanitize } from "../api/_network_cause.ts";
import type { ResolvedHealthOptions } from "./health_options.ts";

/** The probes: `healthz` is `readyz` under its old name, as in kube-apiserver. */
export type HealthProbe = "livez" | "readyz" | "healthz";

/** One line of a {@linkcode HealthReport}: an informer's or an extra check's verdict. */
export interface HealthCheckReport {
  /** The informer's or the check's name. */
  name: string;
  /** Whether it passes this probe. */
  ok: boolean;
  /** Why it fails (or the check's own note), at most 200 characters, never a secret. */
  message?: string;
  /** For an informer: the facts it was judged on, times as milliseconds ago. */
  informer?: {
    /** `hasSynced()`: the store once held a complete list. */
    synced: boolean;
    /** Its `status.state`. */
    state: WatcherState;
    /** Its `status.watching`. */
    watching: boolean;
    /** How long ago `watching` last changed: watching (or not watching) for this long. */
    sinceMsAgo: number;
    /** How long ago the last event or bookmark arrived, if one did. */
    lastEventMsAgo?: number;
    /** The last error reported, if any: its message (sanitized, at most 200 characters). */
    lastError?: { message: string; phase: ErrorPhase; msAgo: number };
  };
}

/** The JSON body of a probe (asked for with `Accept: application/json`). */
export interface HealthReport {
  /** The route probed. */
  probe: HealthProbe;
  /** Whether every check passed (the status is then 200, else 503). */
  ok: boolean;
  /** The informers' verdicts, in the order given, then the extra checks'. */
  checks: HealthCheckReport[];
}

/**
 * Judges every informer and check for `probe` at the clock's `now`.
 *
 * An informer is live unless it is stopped (its `run()` is not running),
 * or it has not been watching for longer than `staleAfterMs` (counted from
 * `status.since`, when it stopped watching). It is ready when it is live
 * and `hasSynced()`. A check counts for readiness, and for liveness too
 * when it is `live`. `lastEventAt` is reported, never judged.
 */
export function healthReport(options: ResolvedHealthOptions, probe: HealthProbe): HealthReport {
  const live = probe === "livez";
  const now = options.clock.now();
  const checks: HealthCheckReport[] = [];
  for (const inf of options.informers) checks.push(judgeInformer(inf, live, now, options));
  for (const c of options.checks) {
    if (live && !c.live) continue;
    checks.push(judgeCheck(c));
  }
  return { probe, ok: checks.every((c) => c.ok), checks };
}

function judgeInformer(
  inf: ResolvedHealthOptions["informers"][number],
  live: boolean,
  now: number,
  options: ResolvedHealthOptions,
): HealthCheckReport {
  const name = safeName(inf.name);
  try {
    const s = inf.status;
    const synced = inf.hasSynced() === true;
    const sinceMsAgo = Math.max(0, now - s.since);
    const lastError = s.lastError && {
      message: errorText(s.lastError.error),
      phase: s.lastError.phase,
      msAgo: Math.max(0, now - s.lastError.at),
    };
    const facts: NonNullable<HealthCheckReport["informer"]> = {
      synced,
      state: s.state,
      watching: s.watching,
      sinceMsAgo,
      ...(s.lastEventAt !== undefined && { lastEventMsAgo: Math.max(0, now - s.lastEventAt) }),
      ...(lastError && { lastError }),
    };
    // The last error, when it happened since the informer stopped watching.
    const recent = lastError && s.lastError!.at >= s.since ? lastError.message : undefined;
    const notWatching = `not watching for ${formatDuration(sinceMsAgo)}`;
    let message: string | undefined;
    if (s.state === "stopped") {
      message = `stopped (not running; ${notWatching}${recent ? `; last error: ${recent}` : ""})`;
    } else if (!s.watching && sinceMsAgo > options.staleAfterMs) {
      message = `${notWatching} (${s.state}${recent ? `: ${recent}` : ""})`;
    } else if (!live && !synced) {
      message = `not synced (${s.state}; ${notWatching}${recent ? `; last error: ${recent}` : ""})`;
    }
    return { name, ok: message === undefined, ...(message && { message }), informer: facts };
  } catch (err) {
    return { name, ok: false, message: `status unreadable: ${errorText(err)}` };
  }
}

function judgeCheck(c: ResolvedHealthOptions["checks"][number]): HealthCheckReport {
  const name = safeName(c.name);
  try {
    const result = c.check();
    if (result === null || typeof result !== "object" || typeof result.ok !== "boolean") {
      return { name, ok: false, message: "check returned no { ok } result" };
    }
    const message = typeof result.message === "string" && result.message !== ""
      ? sanitize(result.message)
      : undefined;
    return { name, ok: result.ok, ...(message && { message }) };
  } catch (err) {
    return { name, ok: false, message: `check threw: ${errorText(err)}` };
  }
}

/** The plain-text body, as kube-apiserver's `?verbose` output. */
export function healthText(report: HealthReport): string {
  const lines = report.checks.map((c) =>
    c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed: ${c.message ?? "failed"}`
  );
  lines.push(`${report.probe} check ${report.ok ? "passed" : "failed"}`);
  return lines.join("\n") + "\n";
}

/**
 * An error as a short safe text: `Name: message` of an `Error` (the
 * library's messages hold no secrets already; `sanitize` also strips URL
 * queries, credentials and control characters, and caps the length), the
 * text of a thrown string, or the value's type, never its contents.
 */
function errorText(err: unknown): string {
  if (err instanceof Error) {
    const name = err.name && err.name !== "Error" ? `${err.name}: ` : "";
    return sanitize(`${name}${err.message}`) || "error without a message";
  }
  if (typeof err === "string") return sanitize(err) || "empty error";
  return `a thrown ${err === null ? "null" : typeof err}`;
}

/** A name on one line: control characters and whitespace runs become one space, at most 200 characters. */
function safeName(name: unknown): string {
  const text = typeof name === "string" ? sanitize(name) : "";
  return text === "" ? "(unnamed)" : text;
}

/** Whole seconds as Go prints durations (`45s`, `6m12s`, `1h0m5s`); under a second in ms. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "0s";
  if (ms < 1_000) return `${Math.floor(ms)}ms`;
  const total = Math.floor(ms / 1_000);
  const h = Math.floor(total / 3_600);
  const m = Math.floor((total % 3_600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
