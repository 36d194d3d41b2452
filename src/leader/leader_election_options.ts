/**
 * Options of a {@linkcode LeaderElector}, and their one source of defaults.
 *
 * @module
 */
import type { KubeClient } from "../transport/kube_client.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import { checkName, resolveIdentity, resolveLeaseTiming } from "./_lease_timing.ts";

/** Options of a {@linkcode LeaderElector}. */
export interface LeaderElectionOptions {
  /** The client the Lease is read and written with. Required. */
  client: KubeClient;
  /** The Lease's namespace. Required. */
  namespace: string;
  /** The Lease's name (one per group of candidates, e.g. the controller's name). Required. */
  name: string;
  /**
   * This candidate's identity, written as the Lease's holder. Unique per
   * process; never a secret (it is readable by anyone who can read the
   * Lease). Default: the hostname (where the runtime tells it) and 8
   * random hex digits.
   */
  identity?: string;
  /**
   * How long a holder keeps the lease after its last renewal, in ms (a
   * candidate takes it over once it has not changed for this long by its
   * own clock). Default: `15_000`.
   */
  leaseDurationMs?: number;
  /**
   * How long the leader keeps trying to renew before it gives up
   * leadership, in ms: shorter than `leaseDurationMs`, so it stops leading
   * before another candidate may take over (as long as the clocks of the
   * two run at about the same rate). Default: `10_000`.
   */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire, and the leader to renew, in ms (with up to 20% jitter). Default: `2_000`. */
  retryPeriodMs?: number;
  /**
   * Clear the holder when `run()` is stopped while leading, so that another
   * candidate takes over at once rather than after a lease duration.
   * Default: `true`.
   */
  releaseOnCancel?: boolean;
  /**
   * Called when this candidate becomes the leader, with a signal that aborts
   * the moment it stops being the leader (lost or stopped): do the leader's
   * work until it aborts. A rejection or throw is reported. Default: none.
   */
  onStartedLeading?: (signal: AbortSignal) => unknown;
  /** Called when this candidate stops being the leader (after its signal aborted). Default: none. */
  onStoppedLeading?: () => void;
  /** Called when the observed leader changes (`""`: none), this candidate included. Default: none. */
  onNewLeader?: (identity: string) => void;
  /** Receives the errors that were handled (a failed read or write, a callback that threw). Default: `console.warn`. */
  onError?: (err: unknown) => void;
  /** Injectable time (ms since the epoch: lease times are written from it). Default: the system clock. */
  clock?: Clock;
  /** Random numbers in [0, 1) for the jitter and the default identity. Default: `Math.random`. */
  random?: () => number;
}

/** Every default of {@linkcode LeaderElectionOptions} (client-go's), in one frozen object. */
export const LEADER_ELECTION_DEFAULTS: Readonly<{
  /** How long a holder keeps the lease after its last renewal, in ms. */
  leaseDurationMs: number;
  /** How long the leader tries to renew before it gives up leadership, in ms. */
  renewDeadlineMs: number;
  /** How often to try, in ms. */
  retryPeriodMs: number;
  /** Clear the holder on a clean stop. */
  releaseOnCancel: boolean;
}> = Object.freeze({
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  releaseOnCancel: true,
});

/** {@linkcode LeaderElectionOptions} validated, with every default filled in. */
export interface ResolvedLeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  releaseOnCancel: boolean;
  onStartedLeading?: (signal: AbortSignal) => unknown;
  onStoppedLeading?: () => void;
  onNewLeader?: (identity: string) => void;
  onError: (err: unknown) => void;
  clock: Clock;
  random: () => number;
}

/**
 * Validates the options and fills in defaults.
 *
 * @throws {TypeError} a missing client, namespace or name, a callback that is not a function.
 * @throws {RangeError} durations out of range, or not `leaseDurationMs > renewDeadlineMs > 1.2 × retryPeriodMs`.
 */
export function resolveLeaderElectionOptions(
  options: LeaderElectionOptions,
): ResolvedLeaderElectionOptions {
  const o = options ?? ({} as LeaderElectionOptions);
  const D = LEADER_ELECTION_DEFAULTS;
  if (!o.client || typeof o.client.requestJson !== "function") {
    throw new TypeError("LeaderElector: client must be a KubeClient");
  }
  const owner = "LeaderElector";
  checkName(owner, "namespace", o.namespace);
  checkName(owner, "name", o.name);
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = resolveLeaseTiming(owner, o, D);
  for (
    const field of [
      "onStartedLeading",
      "onStoppedLeading",
      "onNewLeader",
      "onError",
      "random",
    ] as const
  ) {
    if (o[field] !== undefined && typeof o[field] !== "function") {
      throw new TypeError(`LeaderElector: ${field} must be a function`);
    }
  }
  const random = o.random ?? Math.random;
  const identity = resolveIdentity(owner, o.identity, random);
  return {
    client: o.client,
    namespace: o.namespace,
    name: o.name,
    identity,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    releaseOnCancel: o.releaseOnCancel ?? D.releaseOnCancel,
    onStartedLeading: o.onStartedLeading,
    onStoppedLeading: o.onStoppedLeading,
    onNewLeader: o.onNewLeader,
    onError: o.onError ??
      ((err) =>
        console.warn(
          `[leader election ${o.namespace}/${o.name}] ${
            err instanceof Error ? err.message : String(err)
          }`,
        )),
    clock: o.clock ?? systemClock,
    random,
  };
}
