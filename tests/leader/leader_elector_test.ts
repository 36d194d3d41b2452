/**
 * LeaderElector against the test API server, on a manual clock: between
 * steps of fake time the test waits (by condition) until every elector is
 * back waiting on the clock, so where fake time goes is decided, not raced.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { LeaderElector } from "../../src/leader/leader_elector.ts";
import type { LeaderElectionOptions } from "../../src/leader/leader_election_options.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import { gatedFetch } from "./_gated_fetch.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

async function setup() {
  const server = await FakeApiServer.start();
  const client = new KubeClient({ server: server.url });
  const clock = new ManualClock(START);
  const events: string[] = [];
  const errors: unknown[] = [];
  const running: { elector: LeaderElector; stop: AbortController; done: Promise<unknown> }[] = [];
  const start = (identity: string, options: Partial<LeaderElectionOptions> = {}) => {
    const elector = new LeaderElector({
      client,
      namespace: "default",
      name: "ctrl",
      identity,
      clock,
      random: () => 0, // no jitter: retries exactly every 2 s
      onStartedLeading: (signal) => {
        events.push(`${identity} leads at ${clock.now() - START}`);
        signal.addEventListener(
          "abort",
          () => events.push(`${identity} lost at ${clock.now() - START}`),
        );
      },
      onStoppedLeading: () => events.push(`${identity} stopped`),
      onError: (err) => errors.push(err),
      ...options,
    });
    const stop = new AbortController();
    const done = elector.run({ signal: stop.signal }).then(() => "ended", (err) => err);
    running.push({ elector, stop, done });
    return { elector, stop, done };
  };
  /** Waits (by condition, up to 5 s of real time) until `timers` timers wait on the clock. */
  const settle = async (timers: number) => {
    for (let i = 0; i < 5_000 && clock.pendingTimers < timers; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.ok(clock.pendingTimers >= timers, `${clock.pendingTimers} timers, expected ${timers}`);
  };
  /** Moves fake time on by `ms` in steps of `step`, settling before each. */
  const pass = async (ms: number, timers: number, step = 100) => {
    for (let t = 0; t < ms; t += step) {
      await settle(timers);
      await clock.advance(step);
    }
    await settle(timers);
  };
  const lease = () =>
    client.requestJson<{ spec: Record<string, unknown>; metadata: { resourceVersion: string } }>(
      "/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl",
    );
  const close = async () => {
    for (const r of running) r.stop.abort();
    await clock.flush();
    await Promise.all(running.map((r) => r.done));
    await server.close();
  };
  return { server, client, clock, events, errors, start, settle, pass, lease, close };
}

test("LeaderElector: one candidate leads and renews every retry period; the other waits; a clean stop releases the Lease and the other takes over within one retry period", async () => {
  const t = await setup();
  try {
    const a = t.start("a");
    await t.settle(1);
    assert.equal(a.elector.isLeader, true);
    const created = await t.lease();
    assert.equal(created.spec.holderIdentity, "a");
    assert.equal(created.spec.leaseDurationSeconds, 15);
    assert.equal(created.spec.leaseTransitions, 0);
    assert.match(created.spec.renewTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const newLeaders: string[] = [];
    const b = t.start("b", { onNewLeader: (id) => newLeaders.push(id) });
    await t.pass(30_000, 2); // twice the lease duration: a keeps renewing
    assert.equal(a.elector.isLeader, true);
    assert.equal(b.elector.isLeader, false);
    assert.equal(b.elector.leader, "a");
    const renewed = await t.lease();
    assert.notEqual(renewed.spec.renewTime, created.spec.renewTime);

    const stoppedAt = t.clock.now();
    a.stop.abort();
    assert.equal(await a.done, "ended");
    assert.equal((await t.lease()).spec.holderIdentity, "", "released");
    for (let i = 0; i < 40 && !b.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(b.elector.isLeader, true);
    assert.ok(
      t.clock.now() - stoppedAt <= 2_000,
      `${t.clock.now() - stoppedAt} ms after the release`,
    );
    assert.equal(b.elector.transitions, 1);
    assert.deepEqual(newLeaders, ["a", "", "b"]);
    const ofA = t.events.filter((e) => e.startsWith("a "));
    assert.deepEqual([ofA[0], ofA.at(-1)], ["a leads at 0", "a stopped"]);
    assert.ok(ofA.some((e) => e.startsWith("a lost at")), "its signal aborted");
    assert.deepEqual(t.errors, []);
  } finally {
    await t.close();
  }
});

test("LeaderElector: a leader that vanished without releasing is replaced only once its Lease has not changed for a lease duration", async () => {
  const t = await setup();
  try {
    const a = t.start("a", { releaseOnCancel: false });
    await t.settle(1);
    const b = t.start("b");
    await t.pass(4_000, 2);
    const gone = t.clock.now();
    a.stop.abort(); // no release: as if killed
    await a.done;
    assert.equal((await t.lease()).spec.holderIdentity, "a");
    await t.pass(12_000, 1);
    assert.equal(b.elector.isLeader, false, "not before the lease duration");
    for (let i = 0; i < 100 && !b.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(b.elector.isLeader, true);
    const after = t.clock.now() - gone;
    // a's last renewal was at most one retry period before it vanished, b saw it at its next
    // read (up to one retry period later), and takes over at its first read a lease duration
    // after that (up to one more retry period)
    assert.ok(after >= 13_000 && after <= 15_000 + 2 * 2_000, `${after} ms`);
    assert.equal(b.elector.transitions, 1);
  } finally {
    await t.close();
  }
});

test("LeaderElector: a leader that cannot renew gives leadership up within the renew deadline, before the Lease could expire for another candidate, and runs again", async () => {
  const t = await setup();
  try {
    const a = t.start("a");
    await t.settle(1);
    await t.pass(2_000, 1); // one renewal
    const lastRenewal = t.clock.now();
    for (let i = 0; i < 5_000; i++) { // its answer may still be on its way
      if (Date.parse((await t.lease()).spec.renewTime as string) === lastRenewal) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    const failing = t.server.inject({
      resource: "leases",
      times: Infinity,
      fault: { kind: "status", code: 500 },
    });
    for (let i = 0; i < 200 && a.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(a.elector.isLeader, false);
    // isLeader is false once the last successful renewal started a renew deadline ago
    assert.equal(t.clock.now() - lastRenewal, 10_000);
    const lost = () => t.events.some((e) => e.startsWith("a lost at"));
    for (let i = 0; i < 200 && !lost(); i++) await t.pass(100, 1);
    assert.ok(lost(), "its signal aborted");
    const lostAfter = t.clock.now() - lastRenewal;
    assert.ok(lostAfter <= 2_000 + 10_000 + 100, `lost ${lostAfter} ms after the last renewal`);
    assert.ok(lostAfter < 15_000, "before another candidate may take the Lease");
    assert.ok(t.events.includes("a stopped"));
    assert.ok(t.errors.length > 0, "the failed renewals were reported");
    failing.cancel();
    for (let i = 0; i < 100 && !a.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(a.elector.isLeader, true, "leads again once the server answers");
  } finally {
    await t.close();
  }
});

test("LeaderElector: credentials that may not read or write the Lease end run() with the 403, not a loop", async () => {
  const t = await setup();
  try {
    t.server.inject({ resource: "leases", times: Infinity, fault: { kind: "status", code: 403 } });
    const a = t.start("a");
    const result = await a.done;
    assert.ok(result instanceof KubeStatusError && result.code === 403, String(result));
    assert.equal(a.elector.isLeader, false);
  } finally {
    await t.close();
  }
});

test("LeaderElector refuses absurd options at construction", async () => {
  const t = await setup();
  try {
    const base = { client: t.client, namespace: "default", name: "ctrl" };
    const bad: [Partial<LeaderElectionOptions>, ErrorConstructor | RangeErrorConstructor][] = [
      [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, RangeError],
      [{ renewDeadlineMs: 2_000, retryPeriodMs: 2_000 }, RangeError],
      [{ retryPeriodMs: NaN }, RangeError],
      [{ leaseDurationMs: Infinity }, RangeError],
      [{ retryPeriodMs: 10 }, RangeError],
      [{ name: "Not A Name" }, TypeError],
      [{ namespace: "" }, TypeError],
      [{ identity: "" }, TypeError],
      [{ onStartedLeading: "no" as never }, TypeError],
    ];
    for (const [options, type] of bad) {
      assert.throws(
        () => new LeaderElector({ ...base, ...options }),
        type,
        JSON.stringify(options),
      );
    }
    const e = new LeaderElector(base);
    assert.match(e.identity, /[0-9a-f]{8}$/, "a default identity with a random part");
    assert.notEqual(new LeaderElector(base).identity, e.identity);
  } finally {
    await t.close();
  }
});

/** Waits (by condition, up to 5 s of real time) until `p` settles; whether it did. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  for (let i = 0; i < 5_000 && !done; i++) await new Promise((r) => setTimeout(r, 1));
  return done;
}

test("LeaderElector: a renewal whose request hangs is cut at the renew deadline: the leader steps down before the Lease can expire for another (never two leaders)", async () => {
  const t = await setup();
  const gate = gatedFetch();
  try {
    const a = t.start("a", { client: new KubeClient({ server: t.server.url, fetch: gate.fetch }) });
    await t.settle(1);
    const b = t.start("b");
    await t.pass(4_000, 2);
    const holdFrom = t.clock.now();
    gate.hold = (method) => method === "GET"; // a's next renewal read never answers
    let both = 0;
    for (let i = 0; i < 300 && !b.elector.isLeader; i++) {
      if (a.elector.isLeader && b.elector.isLeader) both++;
      await t.pass(100, 1); // a's read hangs: a may wait on no timer at all
    }
    assert.equal(b.elector.isLeader, true, "b took over the expired Lease");
    assert.equal(a.elector.isLeader, false);
    assert.equal(both, 0, "never both");
    const lost = t.events.find((e) => e.startsWith("a lost at"));
    assert.ok(lost, "a's signal aborted");
    const lostAt = Number(lost.split(" ").at(-1)) - (holdFrom - START);
    assert.ok(lostAt <= 2_000 + 10_000 + 100, `a lost ${lostAt} ms after its read started hanging`);
  } finally {
    gate.hold = () => false; // a, stopped, reads the Lease before it gives it back
    gate.release();
    await t.close();
  }
});

test("LeaderElector: a leader that reads another holder in the Lease steps down at once", async () => {
  const t = await setup();
  try {
    const a = t.start("a");
    await t.settle(1);
    const current = await t.lease();
    await t.client.requestJson("/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl", {
      method: "PUT",
      body: {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: {
          name: "ctrl",
          namespace: "default",
          resourceVersion: current.metadata.resourceVersion,
        },
        spec: { ...current.spec, holderIdentity: "intruder" },
      },
    });
    await t.pass(2_100, 1); // its next renewal reads the Lease
    assert.equal(a.elector.isLeader, false);
    assert.equal(a.elector.leader, "intruder");
    assert.ok(t.events.some((e) => e.startsWith("a lost at 2")), t.events.join());
  } finally {
    await t.close();
  }
});

test("LeaderElector: run() ends when stopped, though onStartedLeading's work ignores its signal; after a loss such a candidate runs for leadership again", async () => {
  const t = await setup();
  try {
    const never = () => new Promise<void>(() => {});
    const a = t.start("a", { onStartedLeading: never });
    await t.settle(1);
    t.server.inject({ resource: "leases", times: 6, fault: { kind: "status", code: 500 } });
    for (let i = 0; i < 200 && a.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(a.elector.isLeader, false, "lost");
    for (let i = 0; i < 200 && !a.elector.isLeader; i++) await t.pass(100, 1);
    assert.equal(a.elector.isLeader, true, "leads again");
    a.stop.abort();
    await t.clock.flush();
    assert.ok(await settled(a.done), "run() ended");
    assert.equal((await t.lease()).spec.holderIdentity, "", "released");
  } finally {
    await t.close();
  }
});

test("LeaderElector: a random that answers NaN still waits its retry period (no silent end, no hot loop)", async () => {
  const t = await setup();
  try {
    t.start("a");
    await t.settle(1);
    const b = t.start("b", { random: () => NaN });
    await t.pass(10_000, 2);
    assert.equal(b.elector.isLeader, false);
    assert.equal(b.elector.leader, "a");
    let ended = false;
    b.done.then(() => (ended = true));
    await t.settle(2);
    assert.equal(ended, false, "still running for leadership");
    assert.match(b.elector.identity, /^b$/);
    assert.match(
      new LeaderElector({ client: t.client, namespace: "d", name: "n", random: () => NaN })
        .identity,
      /[0-9a-f]{8}$/,
    );
  } finally {
    await t.close();
  }
});

test("LeaderElector: a candidate stopped while its acquiring write is in flight never starts leading, and gives the Lease back", async () => {
  const t = await setup();
  const gate = gatedFetch();
  try {
    gate.hold = (method) => method === "POST";
    const a = t.start("a", { client: new KubeClient({ server: t.server.url, fetch: gate.fetch }) });
    for (let i = 0; i < 5_000 && gate.count < 2; i++) await new Promise((r) => setTimeout(r, 1));
    assert.equal(gate.count, 2, "the read, then the create, held");
    gate.hold = () => false;
    gate.release(); // the create goes through
    a.stop.abort(); // as it is stopped
    await t.clock.flush();
    assert.ok(await settled(a.done), "run() ended");
    assert.ok(!t.events.some((e) => e.startsWith("a leads")), t.events.join());
    const lease = await t.lease().catch(() => undefined);
    assert.ok(lease === undefined || lease.spec.holderIdentity === "", "not left held");
  } finally {
    await t.close();
  }
});

test("LeaderElector: two candidates that both read no Lease race to create it; the 409 loser waits and exactly one leads", async () => {
  const t = await setup();
  const gate = gatedFetch();
  try {
    const client = new KubeClient({ server: t.server.url, fetch: gate.fetch });
    gate.hold = (method) => method === "GET";
    const a = t.start("a", { client });
    const b = t.start("b", { client });
    for (let i = 0; i < 5_000 && gate.count < 2; i++) await new Promise((r) => setTimeout(r, 1));
    assert.equal(gate.count, 2, "both reads held: both will find no Lease");
    gate.hold = () => false;
    gate.release(); // both create: one wins, the other gets 409 AlreadyExists
    await t.settle(2);
    assert.equal(gate.count, 4, "two reads, two creates");
    assert.equal([a, b].filter((c) => c.elector.isLeader).length, 1, "exactly one leads");
    await t.pass(20_000, 2);
    assert.equal([a, b].filter((c) => c.elector.isLeader).length, 1, "and keeps leading");
    assert.deepEqual(t.errors, [], "a lost race is not an error");
  } finally {
    await t.close();
  }
});

test("LeaderElector: a leader whose process was paused (its clock jumps past the renew deadline before any timer runs) is no longer the leader at once; it leads again only after a renewal succeeds", async () => {
  const t = await setup();
  try {
    // a on a clock of its own that can jump without running timers (a paused process)
    let jumped = 0;
    const clockA = {
      now: () => t.clock.now() + jumped,
      setTimeout: (fn: () => void, ms: number) => t.clock.setTimeout(fn, ms),
      clearTimeout: (h: unknown) => t.clock.clearTimeout(h),
    };
    const a = t.start("a", { clock: clockA });
    await t.settle(1);
    assert.equal(a.elector.isLeader, true);
    jumped = 20_000; // paused for 20 s: another candidate may have taken the Lease meanwhile
    assert.equal(a.elector.isLeader, false, "not the leader the moment it wakes");
    await t.pass(2_000, 1); // its next renewal: nobody took the Lease, so it renews it
    // the renewal's request may still be on its way (a pending timer does not mean it answered)
    for (let i = 0; i < 5_000 && !a.elector.isLeader; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    assert.equal(a.elector.isLeader, true, "leads again after a successful renewal");
  } finally {
    await t.close();
  }
});
