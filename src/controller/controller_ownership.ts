/**
 * What a replica of a controller owns, and the options of its leader
 * election.
 *
 * @module
 */
import type { LeaderElectionOptions } from "../leader/leader_election_options.ts";

/** How a controller's replicas divide the keys. */
export type OwnershipMode = "single" | "leader" | "shards";

/**
 * What a controller replica owns now, for health checks, metrics and logs.
 */
export interface ControllerOwnership {
  /** `"single"` (no election: every key), `"leader"` (every key while leading) or `"shards"` (its share). */
  mode: OwnershipMode;
  /** Whether it may reconcile (some) keys now: always in `"single"`, while leading, or while a healthy member past its grace. */
  owning: boolean;
  /** This replica's identity in the Lease(s); absent in `"single"`. */
  identity?: string;
  /** `"leader"`: the leader last observed (`""`: none). */
  leader?: string;
  /** `"shards"`: the live members, this replica included while it is healthy. */
  members?: readonly string[];
  /** Changes of `owning` (and, for shards, of the members) since the controller started. */
  transitions: number;
}

/**
 * Options of a controller's leader election: those of a
 * {@linkcode LeaderElector} but `onStartedLeading` (the controller's workers
 * are the leader's work).
 */
export type ControllerLeaderElection = Omit<LeaderElectionOptions, "onStartedLeading">;
