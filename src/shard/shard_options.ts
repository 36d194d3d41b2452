/**
 * Options of a {@linkcode ShardMembership}, and their one source of defaults.
 *
 * @module
 */
import type { KubeClient } from "../transport/kube_client.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import {
  checkMs,
  checkName,
  resolveIdentity,
  resolveLeaseTiming,
} from "../leader/_lease_timing.ts";
import { LEADER_ELECTION_DEFAULTS } from "../leader/leader_election_options.ts";

/** Options of a {@linkcode ShardMembership}. */
export interface ShardOptions {
  /** The client the Leases are read and written with. Required. */
  client: KubeClient;
  /** The namespace of the members' Leases. Required. */
  namespace: string;
  /** The group (e.g. the controller's name): members of one group share its keys. Required. */
  name: string;
  /**
   * This member's identity, written as its Lease's holder and hashed with
   * the keys. Unique per process; never a secret (anyone who can read the
   * Leases reads it). Default: the hostname (where the runtime tells it)
   * and 8 random hex digits.
   */
  identity?: string;
  /**
   * A member's Lease expires for the others this long after they last saw
   * it change (by their own clocks), in ms: then they take its keys.
   * Default: `15_000`.
   */
  leaseDurationMs?: number;
  /**
   * A member owns nothing once its last successful renewal or list started
   * this long ago, in ms: shorter than `leaseDurationMs`, so it stops
   * before the others take its keys. Written in its Lease (annotation
   * `kube-reflector.dev/renew-deadline-ms`, with the retry period in
   * `kube-reflector.dev/retry-period-ms`) for the members that join: see
   * `graceMs`. Default: `10_000`.
   */
  renewDeadlineMs?: number;
  /** How often a member renews its Lease and lists the group's, in ms (with up to 20% jitter). Default: `2_000`. */
  retryPeriodMs?: number;
  /**
   * How long a member that joins (or comes back after failing to renew)
   * waits before it owns keys, in ms: by then every other member has
   * listed it or stopped owning. At least `renewDeadlineMs`. Default:
   * `renewDeadlineMs + retryPeriodMs`.
   *
   * Members of a group may have different timings (a rolling update that
   * changes them): each judges another's expiry by the lease duration
   * written in that one's Lease, and a joiner waits at least the longest
   * renew deadline plus retry period written in the Leases of the live
   * members of its first list after joining (a Lease written by a version
   * without these annotations counts with the joiner's own `graceMs`).
   */
  graceMs?: number;
  /** Injectable time (ms since the epoch: Lease times are written from it). Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for the jitter and the default identity. Default: `Math.random`. */
  random?: () => number;
  /** Receives the errors that were handled (a failed request, a listener that threw). Default: `console.warn`. */
  onError?: (err: unknown) => void;
}

/** Every default of {@linkcode ShardOptions} (those of leader election), in one frozen object. */
export const SHARD_DEFAULTS: Readonly<{
  /** How long a member's Lease lasts after it was last seen to change, in ms. */
  leaseDurationMs: number;
  /** How long a member goes on owning without a successful renewal and list, in ms. */
  renewDeadlineMs: number;
  /** How often to renew and list, in ms. */
  retryPeriodMs: number;
}> = Object.freeze({
  leaseDurationMs: LEADER_ELECTION_DEFAULTS.leaseDurationMs,
  renewDeadlineMs: LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
  retryPeriodMs: LEADER_ELECTION_DEFAULTS.retryPeriodMs,
});

/** {@linkcode ShardOptions} validated, with every default filled in. */
export interface ResolvedShardOptions {
  /** See {@linkcode ShardOptions.client}. */
  client: KubeClient;
  /** See {@linkcode ShardOptions.namespace}. */
  namespace: string;
  /** See {@linkcode ShardOptions.name}. */
  name: string;
  /** See {@linkcode ShardOptions.identity}. */
  identity: string;
  /** See {@linkcode ShardOptions.leaseDurationMs}. */
  leaseDurationMs: number;
  /** See {@linkcode ShardOptions.renewDeadlineMs}. */
  renewDeadlineMs: number;
  /** See {@linkcode ShardOptions.retryPeriodMs}. */
  retryPeriodMs: number;
  /** See {@linkcode ShardOptions.graceMs}. */
  graceMs: number;
  /** See {@linkcode ShardOptions.clock}. */
  clock: Clock;
  /** See {@linkcode ShardOptions.random}. */
  random: () => number;
  /** See {@linkcode ShardOptions.onError}. */
  onError: (err: unknown) => void;
}

/**
 * Validates the options and fills in defaults (the rules of leader election).
 *
 * @throws {TypeError} a missing client, namespace or name, a bad identity, a callback that is not a function.
 * @throws {RangeError} durations out of range, not `leaseDurationMs > renewDeadlineMs > 1.2 × retryPeriodMs`, or `graceMs < renewDeadlineMs`.
 */
export function resolveShardOptions(options: ShardOptions): ResolvedShardOptions {
  const o = options ?? ({} as ShardOptions);
  const owner = "ShardMembership";
  if (!o.client || typeof o.client.requestJson !== "function") {
    throw new TypeError(`${owner}: client must be a KubeClient`);
  }
  checkName(owner, "namespace", o.namespace);
  checkName(owner, "name", o.name);
  const timing = resolveLeaseTiming(owner, o, SHARD_DEFAULTS);
  const graceMs = checkMs(
    owner,
    "graceMs",
    o.graceMs,
    timing.renewDeadlineMs + timing.retryPeriodMs,
    0,
  );
  if (graceMs < timing.renewDeadlineMs) {
    throw new RangeError(
      `${owner}: graceMs must be at least renewDeadlineMs (a member that joins waits until every other has listed it)`,
    );
  }
  for (const field of ["onError", "random"] as const) {
    if (o[field] !== undefined && typeof o[field] !== "function") {
      throw new TypeError(`${owner}: ${field} must be a function`);
    }
  }
  if (o.clock !== undefined && typeof o.clock?.now !== "function") {
    throw new TypeError(`${owner}: clock must be a Clock`);
  }
  const random = o.random ?? Math.random;
  return {
    client: o.client,
    namespace: o.namespace,
    name: o.name,
    identity: resolveIdentity(owner, o.identity, random),
    ...timing,
    graceMs,
    clock: o.clock ?? systemClock,
    random,
    onError: o.onError ??
      ((err) =>
        console.warn(
          `[shard ${o.namespace}/${o.name}] ${err instanceof Error ? err.message : String(err)}`,
        )),
  };
}
