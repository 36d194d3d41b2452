/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's
 * `tools/leaderelection` does it.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { isAlreadyExists, isNotFound } from "../api/predicates.ts";
import { isConflict } from "../api/kube_conflict_error.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { childAbortController, delay } from "../async/_async.ts";
import type { TimerHandle } from "../async/clock.ts";
import { type ResourceClient, resourceClient } from "../transport/resource_client.ts";
import { decide } from "./_leader_decision.ts";
import { type LeaseRecord, recordOf, specOf } from "./_lease_record.ts";
import { jittered } from "./_lease_timing.ts";
import {
  type LeaderElectionOptions,
  type ResolvedLeaderElectionOptions,
  resolveLeaderElectionOptions,
} from "./leader_election_options.ts";

/** A Lease object. */
interface Lease extends KubeObject {
  spec?: Record<string, unknown>;
}

/** The last record read, with its resourceVersion, and when (by our clock) it last changed. */
interface Observed {
  record: LeaseRecord | undefined;
  rv: string;
  changedAt: number;
}

/**
 * Runs for leadership among candidates that share a Lease: at most one
 * leads at a time. A candidate takes the Lease when it is absent, released,
 * or has not been renewed for `leaseDurationMs` (by the candidate's own
 * clock); the leader renews it every `retryPeriodMs` and gives leadership
 * up when it could not renew for `renewDeadlineMs`, before any other
 * candidate may take it (`leaseDurationMs > renewDeadlineMs`, as long as
 * the candidates' clocks run at about the same rate: a clock that runs
 * more than a third slow breaks the margin of the defaults). Every write
 * carries the `resourceVersion` it read, so a 409 means another candidate
 * got there first. After losing leadership it runs again.
 *
 * The RBAC it needs on `leases` in the namespace (API group
 * `coordination.k8s.io`): `get`, `create`, `update`. A 401 or 403 ends
 * `run()` with that error (a missing permission does not become a loop);
 * other failures (a 5xx, a network error) are reported and retried.
 *
 * @example Two candidates: one leads; when it stops, the other takes over at once
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, LeaderElector } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const leading: string[] = [];
 * const candidate = (identity: string) =>
 *   new LeaderElector({
 *     client,
 *     namespace: "default",
 *     name: "my-controller",
 *     identity,
 *     retryPeriodMs: 100,
 *     renewDeadlineMs: 500,
 *     leaseDurationMs: 1_000,
 *     onStartedLeading: () => void leading.push(identity),
 *   });
 * const a = candidate("a"), b = candidate("b");
 * const stopA = new AbortController(), stopB = new AbortController();
 * const runA = a.run({ signal: stopA.signal });
 * while (!a.isLeader) await new Promise((r) => setTimeout(r, 10));
 * const runB = b.run({ signal: stopB.signal });
 * stopA.abort(); // releases the lease
 * await runA;
 * while (!b.isLeader) await new Promise((r) => setTimeout(r, 10));
 * assert.deepEqual(leading, ["a", "b"]);
 * stopB.abort();
 * await runB;
 * await server.close();
 * ```
 */
export class LeaderElector {
  readonly #o: ResolvedLeaderElectionOptions;
  readonly #leases: ResourceClient<Lease>;
  #leader = "";
  #isLeader = false;
  /** Whether the Lease may name this candidate as holder (a write of it was sent and not proven lost). */
  #mayHold = false;
  /** When the last acquire or renewal that succeeded was started, by the clock. */
  #heldSince = -Infinity;
  #transitions = 0;
  #observed: Observed | undefined;
  #running = false;

  /** Validates `options` (a `TypeError`/`RangeError` at once); does nothing until `run()`. */
  constructor(options: LeaderElectionOptions) {
    this.#o = resolveLeaderElectionOptions(options);
    this.#leases = resourceClient<Lease>(this.#o.client, {
      apiVersion: "coordination.k8s.io/v1",
      resource: "leases",
      namespace: this.#o.namespace,
    });
  }

  /** This candidate's identity, as written in the Lease. */
  get identity(): string {
    return this.#o.identity;
  }

  /**
   * Whether this candidate leads now: it is in its leading loop, and its
   * last successful acquire or renewal started less than `renewDeadlineMs`
   * ago by its clock. The second half holds even when the loop has not run
   * (a process paused, or its clock jumped): a leader that wakes after the
   * Lease may have expired for others stops leading at once, not after its
   * next request.
   */
  get isLeader(): boolean {
    return this.#isLeader && this.#o.clock.now() - this.#heldSince < this.#o.renewDeadlineMs;
  }

  /** The leader last observed (`""`: none). */
  get leader(): string {
    return this.#leader;
  }

  /** The Lease's `leaseTransitions` as last read or written. */
  get transitions(): number {
    return this.#transitions;
  }

  /**
   * Runs for leadership until `signal` aborts: acquires, leads (calling
   * `onStartedLeading`), renews, and after losing leadership runs again.
   * On abort while leading, releases the Lease (`releaseOnCancel`) and
   * resolves (without waiting for what `onStartedLeading` returned: that
   * work ends when its signal aborts). Rejects with a 401 or 403 `KubeStatusError` when the
   * credentials may not read or write the Lease.
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    const signal = options?.signal;
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("LeaderElector.run: options.signal is required");
    }
    if (this.#running) throw new Error("LeaderElector.run: already running");
    this.#running = true;
    try {
      while (!signal.aborted) {
        if (!(await this.#acquire(signal)) || signal.aborted) {
          // stopped, perhaps as it acquired (a write whose answer never came): never lead, and
          // give the Lease back should it hold it
          if (this.#o.releaseOnCancel && this.#mayHold) await this.#release();
          return;
        }
        await this.#lead(signal);
      }
    } finally {
      this.#running = false;
    }
  }

  /** Tries every retry period until it leads (true) or `signal` aborts (false). */
  async #acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(signal) === "held") return true;
      if (!(await this.#wait(this.#jittered(), signal))) return false;
    }
    return false;
  }

  /**
   * Leads until leadership lapses (no acquire or renewal that started less
   * than the renew deadline ago succeeded), another holder is seen, or
   * `signal` aborts. One timer, armed from the start of the last success,
   * ends the term: the moment `isLeader` turns false is the moment the
   * leader's signal aborts and its requests are cut.
   */
  async #lead(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    const { controller: term, dispose } = childAbortController(signal);
    let deadline: TimerHandle | undefined;
    const arm = () => {
      if (deadline !== undefined) o.clock.clearTimeout(deadline);
      const left = this.#heldSince + o.renewDeadlineMs - o.clock.now();
      deadline = o.clock.setTimeout(() => term.abort(), Math.max(0, left));
    };
    arm();
    this.#isLeader = true;
    // not awaited: the work ends when its signal aborts, or it is its own business
    // (a run() that waited for work that ignores its signal would never end)
    void Promise.resolve()
      .then(() => o.onStartedLeading?.(term.signal))
      .catch((err) => this.#report(err));
    try {
      while (!term.signal.aborted) {
        if (!(await this.#wait(o.retryPeriodMs, term.signal))) break;
        if (!(await this.#renew(term.signal))) break; // lost, lapsed or stopped
        arm();
      }
    } finally {
      o.clock.clearTimeout(deadline);
      this.#isLeader = false;
      term.abort();
      dispose();
      if (signal.aborted && o.releaseOnCancel) await this.#release();
      try {
        o.onStoppedLeading?.();
      } catch (err) {
        this.#report(err);
      }
    }
  }

  /**
   * Renews, retrying every retry period, until it succeeds (true), or
   * another holder is seen or `term` aborts (false). `term` aborts when
   * leadership lapses: every request of it is cut then, so a renewal that
   * hangs cannot keep a leader leading.
   */
  async #renew(term: AbortSignal): Promise<boolean> {
    while (!term.aborted) {
      const result = await this.#tryAcquireOrRenew(term);
      if (result === "held") return true;
      if (result === "other") return false; // someone else holds it: lost, at once
      if (!(await this.#wait(this.#o.retryPeriodMs, term))) break;
    }
    return false;
  }

  /**
   * Reads the Lease and takes or renews it when it may: `"held"` when this
   * candidate holds it now, `"other"` when another holder has it,
   * `"failed"` when the request failed or lost a race (a 409).
   */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<"held" | "other" | "failed"> {
    const o = this.#o;
    const started = o.clock.now();
    try {
      const observed = await this.#read(signal);
      const d = decide(
        { record: observed.record, changedAt: observed.changedAt, now: o.clock.now() },
        o.identity,
        o.leaseDurationMs,
      );
      if (d.kind === "wait") return "other";
      const lease: Lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: o.name, namespace: o.namespace },
        spec: specOf(d.record),
      };
      let written: Lease;
      this.#mayHold = true; // from here until an answer says otherwise
      if (d.kind === "create") {
        written = await this.#leases.create(lease, { signal });
      } else {
        lease.metadata.resourceVersion = observed.rv;
        written = await this.#leases.replace(lease, { signal });
      }
      this.#saw(written);
      this.#heldSince = started;
      return "held";
    } catch (err) {
      if (signal.aborted) return "failed";
      if (isConflict(err) || isAlreadyExists(err)) return "failed"; // another candidate got there first
      if (err instanceof KubeStatusError && (err.code === 401 || err.code === 403)) throw err;
      this.#report(err);
      return "failed";
    }
  }

  /** Reads the Lease into `#observed`. */
  async #read(signal: AbortSignal): Promise<Observed> {
    try {
      this.#saw(await this.#leases.get(this.#o.name, { signal }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.#observed = { record: undefined, rv: "", changedAt: this.#o.clock.now() };
      this.#setLeader("");
    }
    return this.#observed!;
  }

  /** Records a Lease as read or written. */
  #saw(lease: Lease): void {
    const record = recordOf(lease.spec);
    const before = this.#observed?.record;
    const changed = !before || before.holderIdentity !== record.holderIdentity ||
      before.renewTime !== record.renewTime;
    this.#observed = {
      record,
      rv: lease.metadata?.resourceVersion ?? "",
      changedAt: changed ? this.#o.clock.now() : this.#observed!.changedAt,
    };
    this.#transitions = record.leaseTransitions;
    this.#mayHold = record.holderIdentity === this.#o.identity;
    this.#setLeader(record.holderIdentity);
  }

  #setLeader(identity: string): void {
    if (identity === this.#leader) return;
    this.#leader = identity;
    try {
      this.#o.onNewLeader?.(identity);
    } catch (err) {
      this.#report(err);
    }
  }

  /**
   * Clears the holder, so that another candidate takes over at once (best
   * effort, bounded by the renew deadline). Reads the Lease first (the
   * outcome of the last write may be unknown: an answer cut by the stop),
   * releases only while it names this candidate, and retries once on a 409.
   */
  async #release(): Promise<void> {
    const o = this.#o;
    const { controller, dispose } = childAbortController();
    const timer = o.clock.setTimeout(() => controller.abort(), o.renewDeadlineMs);
    try {
      for (let attempt = 0;; attempt++) {
        const observed = await this.#read(controller.signal);
        if (!observed.record || observed.record.holderIdentity !== o.identity) return;
        try {
          const written = await this.#leases.replace({
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name: o.name, namespace: o.namespace, resourceVersion: observed.rv },
            spec: specOf({
              ...observed.record,
              holderIdentity: "",
              leaseDurationSeconds: 1,
              renewTime: o.clock.now(),
            }),
          }, { signal: controller.signal });
          this.#saw(written);
          return;
        } catch (err) {
          if (!isConflict(err) || attempt > 0) throw err;
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) this.#report(err);
    } finally {
      o.clock.clearTimeout(timer);
      dispose();
    }
  }

  /** Waits `ms`; false when `signal` aborted first. */
  async #wait(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await delay(ms, signal, this.#o.clock);
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      throw err;
    }
  }

  /** The retry period with up to 20% jitter. */
  #jittered(): number {
    return jittered(this.#o.retryPeriodMs, this.#o.random);
  }

  #report(err: unknown): void {
    try {
      this.#o.onError(err);
    } catch { /* a handler's own failure is ignored */ }
  }
}
