/**
 * Membership of a shard group: replicas of a controller split its keys,
 * each holding its own `coordination.k8s.io/v1` Lease.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import { isAlreadyExists, isNotFound } from "../api/predicates.ts";
import { isConflict } from "../api/kube_conflict_error.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { childAbortController, delay } from "../async/_async.ts";
import { type ResourceClient, resourceClient } from "../transport/resource_client.ts";
import { microTime, recordOf } from "../leader/_lease_record.ts";
import { jittered } from "../leader/_lease_timing.ts";
import {
  graceOf,
  healthyUntil,
  liveOthers,
  membershipView,
  type SelfState,
} from "./_membership_view.ts";
import { ownerOf } from "./_rendezvous.ts";
import {
  RENEW_DEADLINE_ANNOTATION,
  RETRY_PERIOD_ANNOTATION,
  SHARD_GROUP_LABEL,
  shardGroupLabel,
  shardLeaseName,
  timingAnnotation,
} from "./_shard_lease.ts";
import {
  type ResolvedShardOptions,
  resolveShardOptions,
  type ShardOptions,
} from "./shard_options.ts";

/** A Lease object. */
interface Lease extends KubeObject {
  spec?: Record<string, unknown>;
}

/** Another member's Lease as last listed, and when (by our clock) it last changed. */
interface Seen {
  holderIdentity: string;
  renewTime: number;
  leaseDurationMs: number;
  /** Its holder's renew deadline and retry period as annotated (`0`: not written). */
  renewDeadlineMs: number;
  retryPeriodMs: number;
  observedAt: number;
  rv: string;
}

const NONE: readonly string[] = Object.freeze([]);

/** How many lease durations a Lease must stay unchanged before any member deletes it as garbage. */
const GARBAGE_AFTER = 4;

/**
 * Membership of a shard group: every replica of a controller runs one, and
 * the group's keys are split among the live members by rendezvous hashing,
 * so that each key has at most one owner at any time and a member that
 * joins or leaves moves only its share of keys.
 *
 * Each member holds its own Lease in `namespace`, named after the group
 * and a hash of its identity and labelled `kube-reflector.dev/shard-group`,
 * renews it every `retryPeriodMs` and lists the group's Leases. A member
 * owns nothing while its last successful renewal or list started
 * `renewDeadlineMs` ago or more, nor for `graceMs` after it joined (or came
 * back after failing to renew), and takes another's keys only once that
 * one's Lease is gone or unchanged for a lease duration by its own clock
 * (the argument is in `src/shard/_membership_view.ts`). Members may have
 * different timings (a rolling update that changes them): each writes its
 * lease duration, renew deadline and retry period in its Lease, the
 * others judge its expiry by its lease duration, and a joiner's grace is
 * at least the longest renew deadline plus retry period among the
 * members it listed. Every change of `owning` or `members`, including
 * one by time alone (the renew deadline passing while a request hangs,
 * the grace ending), is notified to the `onChange` listeners when it
 * happens. On a clean stop it
 * owns nothing at once, then deletes its Lease, so the others take its
 * keys at their next list. Leases of the group unchanged for four lease
 * durations (replicas that crashed) are deleted by the others.
 *
 * The RBAC it needs on `leases` in the namespace (API group
 * `coordination.k8s.io`): `get`, `list`, `create`, `update`, `delete`. A
 * 401 or 403 ends `run()` with that error (a missing permission does not
 * become a loop); other failures (a 5xx, a network error, a request cut at
 * the renew deadline) are reported to `onError` and retried.
 *
 * @example Two members split the keys between them
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, ShardMembership } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const member = (identity: string) =>
 *   new ShardMembership({
 *     client,
 *     namespace: "default",
 *     name: "my-controller",
 *     identity,
 *     retryPeriodMs: 100,
 *     renewDeadlineMs: 500,
 *     leaseDurationMs: 1_000,
 *   });
 * const a = member("a"), b = member("b");
 * const stop = new AbortController();
 * const runs = [a.run({ signal: stop.signal }), b.run({ signal: stop.signal })];
 * while (!(a.owning && b.owning && a.members.length === 2 && b.members.length === 2)) {
 *   await new Promise((r) => setTimeout(r, 10));
 * }
 * const keys = Array.from({ length: 100 }, (_, i) => `default/object-${i}`);
 * for (const key of keys) assert.ok(a.owns(key) !== b.owns(key), "exactly one owner");
 * stop.abort(); // each deletes its Lease
 * await Promise.all(runs);
 * await server.close();
 * ```
 */
export class ShardMembership {
  readonly #o: ResolvedShardOptions;
  readonly #leases: ResourceClient<Lease>;
  readonly #leaseName: string;
  readonly #groupLabel: string;
  readonly #listeners = new Set<() => void>();
  #running = false;
  /** Running and not stopped: only then may it own. */
  #active = false;
  #self: SelfState = {
    joinedAt: undefined,
    lastRenewStartedAt: undefined,
    lastListStartedAt: undefined,
  };
  /** The resourceVersion of its own Lease as last written (`undefined`: unknown). */
  #rv: string | undefined;
  /** The `acquireTime` it last wrote in its own Lease, in ms (`undefined`: it never wrote one). */
  #acquireTime: number | undefined;
  #seen = new Map<string, Seen>();
  #members: readonly string[] = NONE;
  #owning = false;
  /** `owning` holds only until then, whether or not the timer that recomputes the view was late. */
  #owningUntil = -Infinity;
  /** The timer that recomputes the view when it changes by itself (whatever the loop is doing), and when. */
  #timer: unknown = undefined;
  #timerAt: number | undefined;
  #transitions = 0;

  /** Validates `options` (a `TypeError`/`RangeError` at once); does nothing until `run()`. */
  constructor(options: ShardOptions) {
    this.#o = resolveShardOptions(options);
    this.#leases = resourceClient<Lease>(this.#o.client, {
      apiVersion: "coordination.k8s.io/v1",
      resource: "leases",
      namespace: this.#o.namespace,
    });
    this.#leaseName = shardLeaseName(this.#o.name, this.#o.identity);
    this.#groupLabel = shardGroupLabel(this.#o.name);
  }

  /** This member's identity, as written in its Lease and hashed with the keys. */
  get identity(): string {
    return this.#o.identity;
  }

  /** The live members, sorted (this one included while it is healthy); empty when not running. */
  get members(): readonly string[] {
    return this.#members;
  }

  /** Whether this member owns its share of keys now (healthy and past its grace). */
  get owning(): boolean {
    return this.#owning && this.#o.clock.now() < this.#owningUntil;
  }

  /** How many times the live members changed. */
  get transitions(): number {
    return this.#transitions;
  }

  /** Whether this member may reconcile `key` now: it is owning, and `key` hashes to it among the members. */
  owns(key: string): boolean {
    return this.owning && ownerOf(key, this.#members) === this.#o.identity;
  }

  /**
   * Calls `listener` synchronously after each change of `owning` or
   * `members` (a throw is reported to `onError`); returns the unsubscribe.
   */
  onChange(listener: () => void): () => void {
    if (typeof listener !== "function") {
      throw new TypeError("ShardMembership.onChange: listener must be a function");
    }
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /**
   * Takes part in the group until `signal` aborts: renews its Lease and
   * lists the group's every retry period. On abort it stops owning at
   * once, deletes its Lease (best effort, within the renew deadline) and
   * resolves. Rejects with a 401 or 403 `KubeStatusError` when the
   * credentials may not read or write the Leases (owning nothing from
   * then on).
   */
  async run(options: { signal: AbortSignal }): Promise<void> {
    const signal = options?.signal;
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("ShardMembership.run: options.signal is required");
    }
    if (this.#running) throw new Error("ShardMembership.run: already running");
    this.#running = true;
    this.#self = {
      joinedAt: undefined,
      lastRenewStartedAt: undefined,
      lastListStartedAt: undefined,
    };
    this.#rv = this.#acquireTime = undefined;
    this.#seen = new Map();
    this.#active = !signal.aborted;
    const onAbort = () => {
      this.#active = false;
      this.#recompute();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    const o = this.#o;
    try {
      while (!signal.aborted) {
        await this.#renew(signal);
        if (!signal.aborted) await this.#list(signal);
        this.#recompute();
        // the view's own changes (the renew deadline, the grace's end) are the timer's (#recompute)
        await this.#wait(jittered(o.retryPeriodMs, o.random), signal);
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#active = false;
      this.#recompute();
      if (signal.aborted) await this.#deleteOwn();
      this.#running = false;
    }
  }

  /** Renews its Lease (creating it when missing); a failure is reported, a 401/403 thrown. */
  async #renew(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    const startedAt = o.clock.now();
    try {
      const rejoined = await this.#request(
        "renewing its Lease",
        signal,
        (s) => this.#writeOwn(Math.floor(startedAt), s),
      );
      const previous = this.#self.lastRenewStartedAt;
      const now = o.clock.now();
      // joined, or renewed only after its renew deadline: the others may have taken its keys
      if (rejoined || previous === undefined || now - previous >= o.renewDeadlineMs) {
        this.#self.joinedAt = now;
        this.#self.graceMs = undefined; // fixed again by its next list
      }
      this.#self.lastRenewStartedAt = startedAt;
    } catch (err) {
      this.#failed(err, signal);
    }
  }

  /** Writes its Lease with renewTime `at`; true when it created or took it (it joins again). */
  async #writeOwn(at: number, signal: AbortSignal): Promise<boolean> {
    if (this.#rv !== undefined && this.#acquireTime !== undefined) {
      try {
        await this.#replace(this.#rv, this.#acquireTime, at, signal);
        return false;
      } catch (err) {
        if (isNotFound(err)) {
          this.#rv = undefined; // deleted: create it again below
        } else if (isConflict(err)) {
          const current = await this.#getOwn(signal);
          if (current) {
            const r = recordOf(current.spec);
            const ours = r.holderIdentity === this.#o.identity &&
              r.acquireTime === this.#acquireTime;
            if (!ours) {
              this.#report(
                new Error(
                  `ShardMembership: Lease ${this.#o.namespace}/${this.#leaseName} was written by another holder (is identity ${
                    JSON.stringify(this.#o.identity)
                  } used by two replicas?): taking it back, owning nothing for the grace period`,
                ),
              );
            }
            await this.#replace(
              current.metadata.resourceVersion ?? "",
              ours ? this.#acquireTime : at,
              at,
              signal,
            );
            return !ours;
          }
        } else {
          throw err;
        }
      }
    }
    this.#acquireTime = at;
    try {
      this.#saw(await this.#leases.create(this.#lease(undefined, at, at), { signal }));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // left by an earlier process of this identity (or created by a request of ours that was cut)
      const current = await this.#getOwn(signal);
      if (!current) throw err;
      await this.#replace(current.metadata.resourceVersion ?? "", at, at, signal);
    }
    return true;
  }

  async #replace(rv: string, acquireTime: number, at: number, signal: AbortSignal): Promise<void> {
    this.#acquireTime = acquireTime;
    this.#saw(await this.#leases.replace(this.#lease(rv, acquireTime, at), { signal }));
  }

  async #getOwn(signal: AbortSignal): Promise<Lease | undefined> {
    try {
      return await this.#leases.get(this.#leaseName, { signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #saw(written: Lease): void {
    this.#rv = written.metadata?.resourceVersion;
  }

  #lease(rv: string | undefined, acquireTime: number, renewTime: number): Lease {
    const o = this.#o;
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name: this.#leaseName,
        namespace: o.namespace,
        labels: { [SHARD_GROUP_LABEL]: this.#groupLabel },
        // read by a member that joins: its grace covers this member's deadline (see _membership_view.ts)
        annotations: {
          [RENEW_DEADLINE_ANNOTATION]: String(Math.ceil(o.renewDeadlineMs)),
          [RETRY_PERIOD_ANNOTATION]: String(Math.ceil(o.retryPeriodMs)),
        },
        ...(rv === undefined ? {} : { resourceVersion: rv }),
      },
      spec: {
        holderIdentity: o.identity,
        leaseDurationSeconds: Math.ceil(o.leaseDurationMs / 1000),
        acquireTime: microTime(acquireTime),
        renewTime: microTime(renewTime),
      },
    };
  }

  /** Lists the group's Leases into `#seen`, then deletes the garbage among them. */
  async #list(signal: AbortSignal): Promise<void> {
    const o = this.#o;
    const startedAt = o.clock.now();
    try {
      const list = await this.#request(
        "listing the group's Leases",
        signal,
        (s) =>
          this.#leases.list({
            labelSelector: `${SHARD_GROUP_LABEL}=${this.#groupLabel}`,
            signal: s,
          }),
      );
      const now = o.clock.now();
      const seen = new Map<string, Seen>();
      for (const lease of list.items ?? []) {
        const name = lease.metadata?.name;
        if (!name || name === this.#leaseName) continue;
        const r = recordOf(lease.spec);
        const before = this.#seen.get(name);
        const leaseDurationMs = r.leaseDurationSeconds * 1000;
        const changed = !before || before.holderIdentity !== r.holderIdentity ||
          before.renewTime !== r.renewTime || before.leaseDurationMs !== leaseDurationMs;
        const annotations = lease.metadata?.annotations;
        seen.set(name, {
          holderIdentity: r.holderIdentity,
          renewTime: r.renewTime,
          leaseDurationMs,
          renewDeadlineMs: timingAnnotation(annotations, RENEW_DEADLINE_ANNOTATION),
          retryPeriodMs: timingAnnotation(annotations, RETRY_PERIOD_ANNOTATION),
          observedAt: changed ? now : before.observedAt,
          rv: lease.metadata?.resourceVersion ?? "",
        });
      }
      this.#seen = seen;
      const self = this.#self;
      self.lastListStartedAt = startedAt;
      if (self.joinedAt !== undefined && startedAt >= self.joinedAt && self.graceMs === undefined) {
        // its first list since it joined shows every member that may not have listed it yet
        self.graceMs = graceOf(
          o.graceMs,
          liveOthers(o.identity, [...seen.values()], startedAt, o.leaseDurationMs),
        );
      }
    } catch (err) {
      this.#failed(err, signal);
      return;
    }
    this.#recompute(); // before the garbage collection, which may take until the renew deadline
    await this.#collectGarbage(startedAt, signal);
  }

  /** Deletes the group's Leases seen unchanged for four lease durations by the list started at `listStartedAt`. */
  async #collectGarbage(listStartedAt: number, signal: AbortSignal): Promise<void> {
    const o = this.#o;
    for (const [name, s] of this.#seen) {
      const duration = s.leaseDurationMs > 0 ? s.leaseDurationMs : o.leaseDurationMs;
      if (listStartedAt - s.observedAt <= GARBAGE_AFTER * duration || signal.aborted) continue;
      try {
        await this.#request(
          `deleting the stale Lease ${name}`,
          signal,
          (s2) =>
            this.#leases.delete(name, { preconditions: { resourceVersion: s.rv }, signal: s2 }),
        );
        this.#seen.delete(name);
      } catch (err) {
        if (isNotFound(err)) this.#seen.delete(name);
        else if (!isConflict(err)) this.#failed(err, signal); // a 409: it changed, it lives
      }
    }
  }

  /** Deletes its own Lease on a clean stop (best effort, within the renew deadline). */
  async #deleteOwn(): Promise<void> {
    const o = this.#o;
    if (this.#acquireTime === undefined) return; // never wrote it
    const { controller, dispose } = childAbortController();
    const timer = o.clock.setTimeout(() => controller.abort(), o.renewDeadlineMs);
    const signal = controller.signal;
    try {
      let rv = this.#rv;
      for (let attempt = 0; attempt < 2; attempt++) {
        if (rv === undefined) {
          // a write of unknown outcome, or one we raced: delete it only when it is still ours
          const current = await this.#getOwn(signal);
          const r = recordOf(current?.spec);
          if (!current || r.holderIdentity !== o.identity || r.acquireTime !== this.#acquireTime) {
            return;
          }
          rv = current.metadata.resourceVersion ?? "";
        }
        try {
          await this.#leases.delete(this.#leaseName, {
            preconditions: { resourceVersion: rv },
            signal,
          });
          return;
        } catch (err) {
          if (isNotFound(err)) return;
          if (!isConflict(err)) throw err;
          rv = undefined;
        }
      }
    } catch (err) {
      if (!signal.aborted) this.#report(err);
    } finally {
      o.clock.clearTimeout(timer);
      dispose();
      this.#rv = this.#acquireTime = undefined;
    }
  }

  /**
   * Runs one request, cut when this member stops being healthy (or after
   * a renew deadline when it is not): a request that hangs never keeps it
   * owning, nor its loop waiting.
   */
  async #request<T>(
    what: string,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const o = this.#o;
    const { controller, dispose } = childAbortController(signal);
    const now = o.clock.now();
    const until = healthyUntil(this.#self, o.renewDeadlineMs);
    const cutAt = until !== undefined && until > now ? until : now + o.renewDeadlineMs;
    const timer = o.clock.setTimeout(() => {
      controller.abort(
        new Error(`ShardMembership: ${what} did not answer within the renew deadline`),
      );
      this.#recompute();
    }, cutAt - now);
    try {
      return await fn(controller.signal);
    } catch (err) {
      if (controller.signal.aborted && !signal.aborted) throw controller.signal.reason;
      throw err;
    } finally {
      o.clock.clearTimeout(timer);
      dispose();
    }
  }

  /** Handles a failed request: nothing when stopped, a 401/403 thrown, anything else reported. */
  #failed(err: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    if (err instanceof KubeStatusError && (err.code === 401 || err.code === 403)) throw err;
    this.#report(err);
  }

  /** Computes the view anew; notifies the listeners when `owning` or the members changed. */
  #recompute(): void {
    const o = this.#o;
    const now = o.clock.now();
    const view = this.#active
      ? membershipView({
        now,
        timing: o,
        identity: o.identity,
        self: this.#self,
        others: [...this.#seen.values()],
      })
      : { healthy: false, members: [], owning: false, changesAt: undefined };
    this.#owningUntil = view.owning ? view.changesAt! : -Infinity;
    this.#armTimer(view.changesAt);
    const membersChanged = view.members.length !== this.#members.length ||
      view.members.some((m, i) => m !== this.#members[i]);
    if (membersChanged) {
      this.#members = view.members.length ? Object.freeze(view.members) : NONE;
      this.#transitions++;
    }
    const owningChanged = view.owning !== this.#owning;
    this.#owning = view.owning;
    if (!membersChanged && !owningChanged) return;
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (err) {
        this.#report(err);
      }
    }
  }

  /**
   * Arms the timer that recomputes the view at `at` (none when
   * `undefined`), so that a change by time alone (owning ending at the
   * renew deadline, or starting at the grace's end) is notified promptly
   * even while the loop waits on a request.
   */
  #armTimer(at: number | undefined): void {
    if (at === this.#timerAt) return;
    const clock = this.#o.clock;
    if (this.#timerAt !== undefined) clock.clearTimeout(this.#timer);
    this.#timer = this.#timerAt = undefined;
    if (at === undefined) return;
    this.#timerAt = at;
    this.#timer = clock.setTimeout(() => {
      this.#timer = this.#timerAt = undefined;
      this.#recompute();
    }, Math.max(0, at - clock.now()));
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

  #report(err: unknown): void {
    try {
      this.#o.onError(err);
    } catch { /* a handler's own failure is ignored */ }
  }
}
