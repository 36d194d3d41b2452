/**
 * What a member of a shard group owns, as a pure function of what it
 * observed (tested as a table: `tests/shard/membership_view_test.ts`).
 *
 * Each member holds its own Lease and renews it every retry period; every
 * retry period it also lists the group's Leases. Keys go to the live
 * members by rendezvous hashing (`_rendezvous.ts`). Why no key is ever
 * owned by two members at once (as long as the members' clocks run at
 * about the same rate; their readings are never compared):
 *
 * - **A member stops itself first.** It is healthy only while its last
 *   successful renewal and its last successful list both *started* less
 *   than `renewDeadlineMs` ago; unhealthy, it owns nothing. A renewal that
 *   succeeds after it became unhealthy counts as joining again (see
 *   below): meanwhile the others may have taken its keys.
 * - **Removing a member moves only its keys**, to the others. They take
 *   them once its Lease is gone (deleted on a clean stop, after which it
 *   owns nothing) or has expired by their own clock: it is live while its
 *   holder is set and the start of their latest successful list is less
 *   than its `leaseDurationSeconds` after they saw the Lease change. (Not
 *   "now": a view may be up to a renew deadline old and miss a renewal
 *   made since; a list that *started* a lease duration after the last
 *   change it showed proves that no renewal succeeded in between.) Its
 *   last successful renewal started before that change was written, so
 *   it stopped owning at most `renewDeadlineMs` after it, before
 *   `leaseDurationMs` ran out.
 * - **Adding a member moves keys only to it**, so only the joiner must
 *   wait: it owns nothing until `graceMs` (at least `renewDeadlineMs`)
 *   after its Lease was written, by when every other member has either
 *   listed it (and dropped the keys it moves to it) or become unhealthy
 *   (and owns nothing).
 *
 * **Members with different timings** (a rolling update that changes them)
 * are covered too. Each member writes its lease duration in its Lease
 * (`leaseDurationSeconds`) and the others judge its expiry by it, while
 * it stops owning after its own renew deadline, which is shorter (checked
 * per member). Each also writes its renew deadline and retry period
 * (annotations `kube-reflector.dev/renew-deadline-ms` and
 * `kube-reflector.dev/retry-period-ms`), and a joiner's grace is at least
 * the largest renew deadline plus retry period among the live members of
 * its first successful list that started after it joined: a member that
 * has not listed the joiner yet owns until its own deadline, however
 * long. (A joiner owns only while healthy, so only after such a list,
 * which shows every member whose Lease existed when it joined; a member
 * whose Lease came later listed the joiner and waits for the joiner's
 * deadline in turn.) A Lease without these annotations (written by an
 * older version) counts with the joiner's own `graceMs`.
 *
 * @module
 */

/** The timings of the group. */
export interface MembershipTiming {
  /** A member's Lease expires this long after it was last seen to change (when it wrote no duration of its own). */
  leaseDurationMs: number;
  /** A member is unhealthy once its last successful renewal or list started this long ago. */
  renewDeadlineMs: number;
  /** A member owns nothing until this long after it joined (or longer: see {@linkcode graceOf}). */
  graceMs: number;
}

/** What this member knows of itself (times by its own clock). */
export interface SelfState {
  /** When its Lease was created or taken again, or it became healthy again by a renewal (`undefined`: not yet). */
  joinedAt: number | undefined;
  /** When its last successful renewal of its Lease started (`undefined`: none yet). */
  lastRenewStartedAt: number | undefined;
  /** When its last successful list of the group's Leases started (`undefined`: none yet). */
  lastListStartedAt: number | undefined;
  /**
   * Its grace since it joined, fixed by its first successful list that
   * started after it joined (see {@linkcode graceOf}); `undefined`: no such
   * list yet, the latest list counts.
   */
  graceMs?: number;
}

/** Another member's Lease, as this member observed it. */
export interface MemberObservation {
  /** The Lease's holder (`""`: released). */
  holderIdentity: string;
  /** Its `leaseDurationSeconds` in ms (`0`: none written, the group's is used). */
  leaseDurationMs: number;
  /** When (by this member's clock) a list first showed its holder, renew time or duration as they are now. */
  observedAt: number;
  /** Its holder's renew deadline as written in it, in ms (`0` or absent: not written). */
  renewDeadlineMs?: number;
  /** Its holder's retry period as written in it, in ms (`0` or absent: not written). */
  retryPeriodMs?: number;
}

/** The input of {@linkcode membershipView}. */
export interface MembershipInput {
  /** Now, by this member's clock. */
  now: number;
  timing: MembershipTiming;
  /** This member's identity. */
  identity: string;
  self: SelfState;
  /** The group's Leases from the latest successful list (this member's own is ignored). */
  others: readonly MemberObservation[];
}

/** What this member owns. */
export interface MembershipView {
  /** Whether its renewals and lists are recent enough. */
  healthy: boolean;
  /** The live members, sorted (itself included while healthy). */
  members: string[];
  /** Whether it owns its share of keys now: healthy and past its grace. */
  owning: boolean;
  /** When this view next changes by itself (the renew deadline or the grace's end), absent new observations. */
  changesAt: number | undefined;
}

/** Whether a Lease observed at `o.observedAt` is still live as of a list started at `listStartedAt`. */
export function isLive(
  o: MemberObservation,
  listStartedAt: number,
  leaseDurationMs: number,
): boolean {
  const duration = o.leaseDurationMs > 0 ? o.leaseDurationMs : leaseDurationMs;
  return o.holderIdentity !== "" && listStartedAt - o.observedAt < duration;
}

/** Until when a member in state `self` is healthy (`undefined`: it has not been yet). */
export function healthyUntil(self: SelfState, renewDeadlineMs: number): number | undefined {
  const { joinedAt, lastRenewStartedAt, lastListStartedAt } = self;
  return joinedAt === undefined || lastRenewStartedAt === undefined ||
      lastListStartedAt === undefined
    ? undefined
    : Math.min(lastRenewStartedAt, lastListStartedAt) + renewDeadlineMs;
}

/** The Leases among `others` that are live as of a list started at `listStartedAt`, `identity`'s own excluded. */
export function liveOthers(
  identity: string,
  others: readonly MemberObservation[],
  listStartedAt: number,
  leaseDurationMs: number,
): MemberObservation[] {
  return others.filter((o) =>
    o.holderIdentity !== identity && isLive(o, listStartedAt, leaseDurationMs)
  );
}

/**
 * The grace of a member with `graceMs` among the live `others`: at least
 * each one's renew deadline plus retry period, as written in its Lease.
 */
export function graceOf(graceMs: number, others: readonly MemberObservation[]): number {
  let grace = graceMs;
  for (const o of others) {
    const deadline = o.renewDeadlineMs ?? 0;
    if (deadline > 0) grace = Math.max(grace, deadline + (o.retryPeriodMs ?? 0));
  }
  return grace;
}

/** Decides what `input.identity` owns; see the module doc. */
export function membershipView(input: MembershipInput): MembershipView {
  const { now, timing, identity, self, others } = input;
  const { joinedAt, lastListStartedAt } = self;
  const until = healthyUntil(self, timing.renewDeadlineMs);
  const healthy = until !== undefined && now < until;
  const alive = lastListStartedAt === undefined
    ? []
    : liveOthers(identity, others, lastListStartedAt, timing.leaseDurationMs);
  const live = new Set(alive.map((o) => o.holderIdentity));
  if (healthy) live.add(identity);
  const members = [...live].sort();
  const graceEnd = (joinedAt ?? 0) + (self.graceMs ?? graceOf(timing.graceMs, alive));
  const owning = healthy && now >= graceEnd;
  let changesAt: number | undefined;
  if (healthy) changesAt = owning ? until : Math.min(until!, graceEnd);
  return { healthy, members, owning, changesAt };
}
