/**
 * The AGE column as kubectl writes it (k8s.io/apimachinery's
 * `duration.HumanDuration`): `45s`, `5m30s`, `15m`, `3h20m`, `10h`, `3d4h`,
 * `12d`, `2y30d`, `9y`.
 *
 * @module
 */

/** kubectl's short form of a duration in ms. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** The age of an object created at `timestamp` (RFC 3339), at `nowMs`; `<unknown>` without one. */
export function ageOf(timestamp: string | undefined, nowMs: number): string {
  const t = timestamp === undefined ? NaN : Date.parse(timestamp);
  return Number.isNaN(t) ? "<unknown>" : humanDuration(nowMs - t);
}
