/**
 * ShardMembership against the test API server on a manual clock (see
 * `_shard_harness.ts`): after every 100 ms step of fake time the harness
 * samples the ownership of 1000 keys and records any key owned by two
 * members; every test ends asserting there was none.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { ownerOf } from "../../src/shard/_rendezvous.ts";
import { shardLeaseName } from "../../src/shard/_shard_lease.ts";
import { KEYS, shardHarness } from "./_shard_harness.ts";

const GRACE = 12_000; // renewDeadline + retryPeriod

test("ShardMembership: three members converge to the same members and split 1000 keys disjointly and completely", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = [t.start("a"), t.start("b"), t.start("c")];
    await t.step();
    assert.equal(a.m.owning, false, "in its grace");
    assert.deepEqual(t.owned(a), []);
    await t.until(() => a.m.owning && b.m.owning && c.m.owning);
    const took = t.now();
    assert.ok(took >= GRACE && took <= GRACE + 2_000, `${took} ms`);
    for (const x of [a, b, c]) {
      assert.deepEqual(x.m.members, ["a", "b", "c"], x.id);
      assert.ok(x.changes >= 2, "listeners heard of the members and of owning");
    }
    for (const key of KEYS) assert.equal(t.owners(key).length, 1, key);
    for (const x of [a, b, c]) {
      const n = t.owned(x).length;
      assert.ok(n > 250 && n < 420, `${x.id} owns ${n}`);
      assert.deepEqual(t.owned(x), KEYS.filter((k) => ownerOf(k, ["a", "b", "c"]) === x.id));
    }
    // their Leases: one each, named after the group and a hash of the identity, labelled with the group
    const names = (await t.leases()).sort();
    assert.equal(names.length, 3);
    for (const name of names) assert.match(name, /^ctrl-[0-9a-f]{16}$/);
    const lease = await t.lease(names[0]);
    assert.deepEqual(lease.metadata.labels, { "kube-reflector.dev/shard-group": "ctrl" });
    assert.equal(lease.spec.leaseDurationSeconds, 15);
    assert.ok(["a", "b", "c"].includes(lease.spec.holderIdentity as string));
    assert.match(lease.spec.renewTime as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // they keep renewing: a minute later nothing changed
    const transitions = a.m.transitions;
    await t.pass(60_000, 500);
    assert.equal(a.m.transitions, transitions);
    assert.ok(a.m.owning && b.m.owning && c.m.owning);
    assert.deepEqual(t.violations, []);
    assert.deepEqual([...a.errors, ...b.errors, ...c.errors], []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a joiner owns nothing during its grace, while the others drop the keys that move to it within a retry period; never two owners", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    await t.pass(700); // out of phase with the others' ticks
    const joinedAt = t.now();
    const d = t.start("d");
    const ofD = KEYS.filter((k) => ownerOf(k, ["a", "b", "c", "d"]) === "d");
    assert.ok(ofD.length > 150);
    let dropped: number | undefined;
    while (!d.m.owning) {
      await t.step();
      if (!d.m.owning) assert.deepEqual(t.owned(d), [], "nothing during its grace");
      if (dropped === undefined && ofD.every((k) => t.owners(k).length === 0)) dropped = t.now();
      assert.ok(t.now() - joinedAt < 20_000, "owns in the end");
    }
    const owningAfter = t.now() - joinedAt;
    assert.ok(owningAfter >= GRACE && owningAfter <= GRACE + 2_100, `owns after ${owningAfter} ms`);
    assert.ok(
      dropped !== undefined && dropped - joinedAt <= 2_100,
      `dropped after ${dropped! - joinedAt} ms`,
    );
    await t.until(() => [a, b, c].every((x) => x.m.members.length === 4));
    for (const key of KEYS) assert.equal(t.owners(key).length, 1, key);
    assert.deepEqual(t.owned(d), ofD);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a member stopped cleanly owns nothing at once and deletes its Lease; the others own its keys within a retry period", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    await t.pass(300);
    let heard = 0;
    const unsubscribe = a.m.onChange(() => heard++);
    a.stop.abort();
    assert.equal(a.m.owning, false, "at once");
    assert.deepEqual(t.owned(a), []);
    assert.equal(heard, 1, "its listeners heard it at once");
    unsubscribe();
    const stoppedAt = t.now();
    assert.equal(await a.done, "ended");
    assert.equal((await t.leases()).length, 2, "its Lease is gone");
    const took = await t.until(() => KEYS.every((k) => t.owners(k).length === 1));
    assert.ok(took <= 2_000, `the others took its keys ${took} ms after`);
    assert.ok(t.now() - stoppedAt <= 2_100);
    assert.deepEqual(b.m.members, ["b", "c"]);
    assert.deepEqual(c.m.members, ["b", "c"]);
    assert.deepEqual(a.m.members, []);
    assert.equal(heard, 1);
    assert.deepEqual(t.violations, []);
    assert.deepEqual(a.errors, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a member whose requests hang (as if killed) stops owning at its renew deadline; the others take its keys only after a lease duration by their clock", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    await t.pass(500);
    const ofA = t.owned(a);
    const lastRenewal = Math.max(
      ...a.net.log.filter((r) => r.method === "PUT" && r.status === 200).map((r) => r.at),
    );
    a.net.hold = () => true; // nothing it sends ever answers
    let aStopped: number | undefined;
    let taken: number | undefined;
    while (taken === undefined) {
      await t.step();
      if (aStopped === undefined && !a.m.owning) aStopped = t.now();
      if (ofA.some((k) => b.m.owns(k) || c.m.owns(k))) taken = t.now();
      assert.ok(t.now() - lastRenewal < 30_000, "taken in the end");
    }
    assert.ok(aStopped !== undefined && aStopped < taken, "it stopped before the others took over");
    assert.ok(
      aStopped - lastRenewal <= 10_100,
      `stopped ${aStopped - lastRenewal} ms after its last renewal`,
    );
    assert.ok(
      taken - lastRenewal >= 15_000,
      `taken ${taken - lastRenewal} ms after its last renewal`,
    );
    assert.ok(
      taken - lastRenewal <= 15_000 + 2 * 2_000 + 200,
      `taken ${taken - lastRenewal} ms after`,
    );
    await t.until(() => KEYS.every((k) => t.owners(k).length === 1), 2_100);
    assert.deepEqual(b.m.members, ["b", "c"]);
    assert.ok(a.errors.length > 0, "its cut requests were reported");
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a member whose requests fail (500) stops owning within its renew deadline; when they succeed again it waits a grace before owning again", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    await t.pass(300);
    const failingFrom = t.now();
    a.net.fail = () => 500;
    const stopped = await t.until(() => !a.m.owning);
    assert.ok(stopped <= 10_000, `stopped ${stopped} ms after its requests began to fail`);
    assert.ok(a.errors.some((e) => e instanceof KubeStatusError && e.code === 500));
    await t.until(() => KEYS.every((k) => t.owners(k).length === 1), 20_000);
    assert.ok(t.now() - failingFrom >= 13_000, "not before its Lease expired");
    assert.deepEqual(b.m.members, ["b", "c"]);
    a.net.fail = () => 0;
    const back = t.now();
    await t.until(() => a.m.owning, 20_000);
    assert.ok(
      t.now() - back >= GRACE,
      `owns again ${t.now() - back} ms after its requests succeed`,
    );
    await t.until(() => [b, c].every((x) => x.m.members.length === 3));
    for (const key of KEYS) assert.equal(t.owners(key).length, 1, key);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a member whose lists fail never takes the keys of a member that renewed meanwhile (expiry is judged at the start of a list, not by now)", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    await t.pass(300);
    // a's next three renewals fail: it renews 8 s after the last, still healthy. b's lists fail
    // after its next three: its view (healthy for 10 s more) never shows a's late renewal, and
    // by now a's Lease is unchanged for more than a lease duration in it
    let aFailed = 0, bListed = 0;
    a.net.fail = (method) => method === "PUT" && aFailed < 3 ? (aFailed++, 500) : 0;
    b.net.fail = (method, url) =>
      method === "GET" && url.includes("labelSelector") && bListed++ >= 3 ? 500 : 0;
    await t.pass(20_000);
    assert.equal(aFailed, 3);
    assert.equal(a.m.owning, true, "a renewed before its deadline, and owned all along");
    assert.equal(b.m.owning, false, "b stopped at its deadline");
    assert.deepEqual(t.violations, []);
    b.net.fail = () => 0;
    await t.until(() => b.m.owning);
    assert.deepEqual(b.m.members, ["a", "b", "c"]);
    assert.ok(c.m.owning);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: a clock jump of a minute never leaves two owners of a key, and the group converges again", async () => {
  const t = await shardHarness();
  try {
    // a's clock alone jumps (its host was suspended): its timers do not fire on the way
    let offset = 0;
    const aClock = {
      now: () => t.clock.now() + offset,
      setTimeout: (fn: () => void, ms: number) => t.clock.setTimeout(fn, ms),
      clearTimeout: (handle: unknown) => t.clock.clearTimeout(handle),
    };
    const [a, b, c] = [t.start("a", { clock: aClock }), t.start("b"), t.start("c")];
    const converged = () =>
      [a, b, c].every((x) => x.m.owning && x.m.members.length === 3) &&
      KEYS.every((k) => t.owners(k).length === 1);
    await t.until(converged);
    await t.pass(500);
    await t.settle();
    offset += 60_000;
    assert.equal(a.m.owning, false, "a owns nothing the moment its clock jumped");
    let took = await t.until(converged);
    assert.ok(took >= GRACE, `a owns again after ${took} ms: it waited a grace`);
    // then everyone's clock jumps a minute (the manual clock fires the timers on the way)
    await t.pass(500);
    await t.settle();
    await t.clock.advance(60_000);
    await t.step(0);
    took = await t.until(converged);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: credentials that may not read or write Leases end run() with the 403, not a loop", async () => {
  const t = await shardHarness();
  try {
    t.server.inject({ resource: "leases", times: Infinity, fault: { kind: "status", code: 403 } });
    const a = t.start("a");
    const result = await a.done;
    assert.ok(result instanceof KubeStatusError && result.code === 403, String(result));
    assert.equal(a.m.owning, false);
    assert.deepEqual(a.m.members, []);
    assert.deepEqual(a.errors, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: the Lease of a member that vanished is deleted once unchanged for four lease durations; its keys moved after one", async () => {
  const t = await shardHarness();
  try {
    const [a, b, c] = await t.converge(["a", "b", "c"]);
    a.net.hold = () => true; // as if killed: its Lease stays
    await t.pass(30_000, 500);
    assert.deepEqual(b.m.members, ["b", "c"]);
    assert.equal((await t.leases()).length, 3, "not yet deleted");
    await t.pass(45_000, 500);
    assert.equal((await t.leases()).length, 2, "deleted");
    assert.ok(b.m.owning && c.m.owning);
    assert.deepEqual(b.errors, []);
    assert.deepEqual(c.errors, []);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: two replicas given the same identity fight over its Lease, report it, and neither owns", async () => {
  const t = await shardHarness();
  try {
    const [b] = await t.converge(["b"]);
    const a1 = t.start("a");
    await t.pass(1_000);
    const a2 = t.start("a");
    await t.pass(30_000, 500);
    assert.equal(a1.m.owning, false);
    assert.equal(a2.m.owning, false);
    assert.ok([...a1.errors, ...a2.errors].some((e) => /used by two replicas/.test(String(e))));
    assert.ok(b.m.owning);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: owning never changes unnoticed: a list answered after the deadline computed before the renewal that preceded it keeps it owning, silently or not", async () => {
  const t = await shardHarness();
  try {
    const [a] = await t.converge(["a"]);
    // its next renewal answers 1 s late, so the list after it starts 1 s later than the renewal did
    let renewHeldAt: number | undefined;
    a.net.hold = (method) => method === "PUT" && (renewHeldAt ??= t.now(), true);
    await t.until(() => renewHeldAt !== undefined, 2_100);
    await t.pass(1_000);
    a.net.hold = () => false;
    a.net.release();
    await t.settle();
    // its next list hangs; the renewal before it succeeded, so it stays healthy until that list's
    // start + 10 s, later than the deadline computed at the last recompute (the held renewal's start + 10 s)
    let listHeldAt: number | undefined;
    a.net.hold = (method, url) =>
      method === "GET" && url.includes("labelSelector") && (listHeldAt ??= t.now(), true);
    await t.until(() => listHeldAt !== undefined, 2_100);
    const changes = a.changes;
    await t.pass(renewHeldAt! + 10_500 - t.now());
    assert.equal(a.m.owning, true, "its last renewal and list started less than 10 s ago");
    a.net.hold = () => false;
    a.net.release();
    await t.pass(2_000);
    assert.equal(a.m.owning, true);
    assert.equal(a.changes, changes, "nothing changed, so nothing was notified");
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: owning that ends by time while a request hangs is notified at that moment, and so is owning again", async () => {
  const t = await shardHarness();
  try {
    const [a] = await t.converge(["a"]);
    const heard: [number, boolean, string][] = [];
    a.m.onChange(() => heard.push([t.now(), a.m.owning, a.m.members.join()]));
    let heldAt: number | undefined;
    a.net.hold = (method, url) =>
      method === "GET" && url.includes("labelSelector") && (heldAt ??= t.now(), true);
    await t.until(() => heldAt !== undefined, 2_100);
    await t.until(() => !a.m.owning, 10_100);
    // its deadline: the start of the list before the held one (a retry period earlier) + 10 s
    assert.deepEqual(heard, [[heldAt! - 2_000 + 10_000, false, ""]], "heard at its deadline");
    a.net.hold = () => false;
    a.net.release();
    await t.until(() => a.m.owning, 20_000);
    assert.deepEqual(heard.slice(1).map(([, owning, members]) => [owning, members]), [
      [false, "a"], // healthy again, in its grace
      [true, "a"],
    ]);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: members with different renew deadlines (a rolling update): a joiner waits for the longest deadline + retry period written in the others' Leases; never two owners", async () => {
  const t = await shardHarness();
  try {
    // an old replica with long timings (lease 6 s, deadline 5 s, retry 2 s)
    const a = t.start("a", {
      leaseDurationMs: 6_000,
      renewDeadlineMs: 5_000,
      retryPeriodMs: 2_000,
    });
    await t.until(() => a.m.owning);
    while (t.now() % 2_000 !== 0) await t.step();
    // a new replica with short ones joins (its own grace: 1.2 s); from now on a's lists fail, so a
    // owns all its keys (b's share too) until its deadline, 5 s after its last list
    a.net.fail = (method, url) => method === "GET" && url.includes("labelSelector") ? 500 : 0;
    const b = t.start("b", { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 200 });
    const took = await t.until(() => b.m.owning, 10_000);
    assert.ok(took >= 7_000 && took <= 7_100, `b owns ${took} ms after it started`);
    assert.equal(a.m.owning, false);
    assert.deepEqual(t.violations, []);
    // each Lease carries its holder's deadline and retry period
    const annotations = async (x: typeof a) => {
      const name = (await t.leases()).find((n) => n.endsWith(hex(x)))!;
      return (await t.lease(name)).metadata.annotations;
    };
    const hex = (x: typeof a) => shardLeaseName("ctrl", x.id).slice(-16);
    assert.deepEqual(await annotations(a), {
      "kube-reflector.dev/renew-deadline-ms": "5000",
      "kube-reflector.dev/retry-period-ms": "2000",
    });
    assert.deepEqual(await annotations(b), {
      "kube-reflector.dev/renew-deadline-ms": "1000",
      "kube-reflector.dev/retry-period-ms": "200",
    });
    // a lists again: after a grace of its own (it was unhealthy) it owns its share, b drops it
    a.net.fail = () => 0;
    await t.until(() =>
      a.m.owning && b.m.owning && a.m.members.length === 2 && b.m.members.length === 2
    );
    for (const key of KEYS) assert.equal(t.owners(key).length, 1, key);
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});

test("ShardMembership: members with different lease durations: a member with a long deadline whose requests hang keeps its keys for its own lease duration, not the others'", async () => {
  const t = await shardHarness();
  try {
    const a = t.start("a", {
      leaseDurationMs: 6_000,
      renewDeadlineMs: 5_000,
      retryPeriodMs: 2_000,
    });
    const b = t.start("b", { leaseDurationMs: 2_000, renewDeadlineMs: 1_000, retryPeriodMs: 200 });
    await t.until(() =>
      a.m.owning && b.m.owning && a.m.members.length === 2 && b.m.members.length === 2
    );
    await t.pass(300);
    const ofA = t.owned(a);
    const lastRenewal = Math.max(
      ...a.net.log.filter((r) => r.method === "PUT" && r.status === 200).map((r) => r.at),
    );
    a.net.hold = () => true;
    let taken: number | undefined;
    while (taken === undefined) {
      await t.step();
      if (ofA.some((k) => b.m.owns(k))) taken = t.now();
      assert.ok(t.now() - lastRenewal < 20_000, "taken in the end");
    }
    assert.ok(
      taken - lastRenewal >= 6_000,
      `taken ${taken - lastRenewal} ms after a's last renewal`,
    );
    assert.ok(
      taken - lastRenewal <= 6_000 + 2 * 200 + 200,
      `taken ${taken - lastRenewal} ms after`,
    );
    assert.deepEqual(t.violations, []);
  } finally {
    await t.close();
  }
});
