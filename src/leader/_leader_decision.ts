/**
 * Whether a candidate may take or keep a Lease, and what to write: a pure
 * function of what it observed, tested as a table
 * (`tests/leader/leader_decision_test.ts`). client-go's
 * `tryAcquireOrRenew`: a lease held by another is free only once it has
 * not changed for a lease duration *by this candidate's own clock* (the
 * holder's clock and the server's are never compared with ours).
 *
 * @module
 */
import type { LeaseRecord } from "./_lease_record.ts";

/** What the candidate knows. */
export interface Observation {
  /** The lease as read (`undefined`: there is none). */
  record: LeaseRecord | undefined;
  /** When (by the candidate's clock) the record was last seen to change. */
  changedAt: number;
  /** Now, by the candidate's clock. */
  now: number;
}

/** What to do. */
export type Decision =
  | { kind: "create"; record: LeaseRecord }
  | { kind: "update"; record: LeaseRecord; renew: boolean }
  | { kind: "wait"; holder: string; expiresAt: number };

/** Decides for `identity`, which holds leases for `leaseDurationMs`. */
export function decide(o: Observation, identity: string, leaseDurationMs: number): Decision {
  const seconds = Math.ceil(leaseDurationMs / 1000);
  const { record, now } = o;
  if (record === undefined) {
    return {
      kind: "create",
      record: {
        holderIdentity: identity,
        leaseDurationSeconds: seconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      },
    };
  }
  const held = record.holderIdentity !== "" && record.holderIdentity !== identity;
  // the holder's own duration, as written (ours when it wrote none)
  const duration = record.leaseDurationSeconds > 0
    ? record.leaseDurationSeconds * 1000
    : leaseDurationMs;
  const expiresAt = o.changedAt + duration;
  if (held && expiresAt > now) return { kind: "wait", holder: record.holderIdentity, expiresAt };
  const renew = record.holderIdentity === identity;
  return {
    kind: "update",
    renew,
    record: {
      holderIdentity: identity,
      leaseDurationSeconds: seconds,
      acquireTime: renew ? record.acquireTime : now,
      renewTime: now,
      leaseTransitions: renew ? record.leaseTransitions : record.leaseTransitions + 1,
    },
  };
}
