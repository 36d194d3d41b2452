/**
 * Which keys this replica of a controller may reconcile: all of them (one
 * replica), all of them while it leads (leader election), or its share
 * (sharding). The controller asks `owns(key)` before it hands a key to a
 * worker, and hears of every change: it then aborts the reconciles of keys
 * it lost and enqueues the keys it gained.
 *
 * @module
 */
import { LeaderElector } from "../leader/leader_elector.ts";
import { ShardMembership } from "../shard/shard_membership.ts";
import type { ShardOptions } from "../shard/shard_options.ts";
import { ownerOf } from "../shard/_rendezvous.ts";
import type { ControllerLeaderElection, ControllerOwnership } from "./controller_ownership.ts";

/**
 * A change of ownership: `ownedBefore(key)` tells whether the key was owned
 * just before it (so the gained keys are those owned now and not before).
 */
export type OwnershipListener = (ownedBefore: (key: string) => boolean) => void;

/** The controller's view of ownership; see the module doc. */
export interface KeyOwnership {
  /** Whether this replica may reconcile `key` now. */
  owns(key: string): boolean;
  /** Runs the election or membership until `signal` aborts; rejects when it cannot go on (a 401/403). */
  run(signal: AbortSignal): Promise<void>;
  /** Called synchronously after each change; returns the unsubscribe. */
  onChange(listener: OwnershipListener): () => void;
  /** The state, for status and metrics. */
  status(): ControllerOwnership;
}

/** Every key, always: one replica. */
export function singleOwnership(): KeyOwnership {
  return {
    owns: () => true,
    run: () => Promise.resolve(),
    onChange: () => () => {},
    status: () => ({ mode: "single", owning: true, transitions: 0 }),
  };
}

/** Every key while this replica leads; validates `options` at once. */
export function leaderOwnership(options: ControllerLeaderElection): KeyOwnership {
  const listeners = new Set<OwnershipListener>();
  let transitions = 0;
  const changed = (before: boolean) => {
    transitions++;
    for (const listener of [...listeners]) listener(() => before);
  };
  const elector = new LeaderElector({
    ...options,
    onStartedLeading: (signal) => {
      changed(false);
      signal.addEventListener("abort", () => changed(true), { once: true });
    },
  });
  return {
    owns: () => elector.isLeader,
    run: (signal) => elector.run({ signal }),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    status: () => ({
      mode: "leader",
      owning: elector.isLeader,
      identity: elector.identity,
      leader: elector.leader,
      transitions,
    }),
  };
}

/** This replica's share of the keys, among the live members of its group; validates `options` at once. */
export function shardOwnership(options: ShardOptions): KeyOwnership {
  const membership = new ShardMembership(options);
  const listeners = new Set<OwnershipListener>();
  let before = { owning: false, members: [] as readonly string[] };
  membership.onChange(() => {
    const prev = before;
    before = { owning: membership.owning, members: membership.members };
    const ownedBefore = (key: string) =>
      prev.owning && ownerOf(key, prev.members) === membership.identity;
    for (const listener of [...listeners]) listener(ownedBefore);
  });
  let owningChanges = 0;
  let lastOwning = false;
  membership.onChange(() => {
    if (membership.owning !== lastOwning) owningChanges++;
    lastOwning = membership.owning;
  });
  return {
    owns: (key) => membership.owns(key),
    run: (signal) => membership.run({ signal }),
    onChange: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    status: () => ({
      mode: "shards",
      owning: membership.owning,
      identity: membership.identity,
      members: membership.members,
      transitions: owningChanges + membership.transitions,
    }),
  };
}
