/**
 * The part of a `coordination.k8s.io/v1` Lease that leader election reads
 * and writes, and the API's micro-time format.
 *
 * @module
 */

/** A Lease's `spec`, as leader election uses it. */
export interface LeaseRecord {
  /** Who holds the lease (`""`: nobody, it was released). */
  holderIdentity: string;
  /** How long a holder keeps it after its last renewal, in seconds. */
  leaseDurationSeconds: number;
  /** When the current holder acquired it (ms since the epoch). */
  acquireTime: number;
  /** When the current holder last renewed it (ms since the epoch). */
  renewTime: number;
  /** How many times it changed hands. */
  leaseTransitions: number;
}

/** A time as the API's `MicroTime` wants it: RFC 3339 with six fractional digits, in UTC. */
export function microTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2026-12-06T08:10:00.123Z
  const micros = String(Math.floor((ms - Math.floor(ms)) * 1000)).padStart(3, "0");
  return `${iso.slice(0, -1)}${micros}Z`;
}

/** A `MicroTime` (or any RFC 3339 time) as ms since the epoch; `undefined` when it is none. */
export function parseMicroTime(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The record in a Lease's `spec` (missing fields read as empty). */
export function recordOf(spec: unknown): LeaseRecord {
  const s = (spec ?? {}) as Record<string, unknown>;
  const count = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0;
  return {
    holderIdentity: typeof s.holderIdentity === "string" ? s.holderIdentity : "",
    leaseDurationSeconds: count(s.leaseDurationSeconds),
    acquireTime: parseMicroTime(s.acquireTime) ?? 0,
    renewTime: parseMicroTime(s.renewTime) ?? 0,
    leaseTransitions: count(s.leaseTransitions),
  };
}

/** A record as a Lease's `spec`. */
export function specOf(record: LeaseRecord): Record<string, unknown> {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: microTime(record.acquireTime),
    renewTime: microTime(record.renewTime),
    leaseTransitions: record.leaseTransitions,
  };
}
