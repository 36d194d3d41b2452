/**
 * Members of a shard group against the test API server, on a manual clock.
 * Each member talks through its own test fetch (which can hold or fail its
 * requests and counts those in flight); between steps of fake time the
 * harness waits until no request is in flight and every running member
 * waits on the clock, so where fake time goes is decided, not raced. After
 * every step it checks that no key is owned by two members, and that each
 * member's `owning` is what its listeners last heard (a change by time
 * alone is notified too); members given a clock of their own (a clock
 * that jumps without firing timers) are spared the second check.
 *
 * @module
 */
import assert from "node:assert/strict";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { ShardMembership } from "../../src/shard/shard_membership.ts";
import type { ShardOptions } from "../../src/shard/shard_options.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";

export const START = Date.parse("2026-12-06T00:00:00Z");
export const KEYS: readonly string[] = Array.from(
  { length: 1000 },
  (_, i) => `ns-${i % 10}/object-${i}`,
);

/** A fetch that can hold or fail requests, and counts those in flight. */
export function testFetch(clock: ManualClock) {
  const pending: (() => void)[] = [];
  const net = {
    /** Requests it picks wait until `release()` or their abort. */
    hold: (_method: string, _url: string) => false,
    /** The status it answers a request with instead of the server (`0`: the server answers). */
    fail: (_method: string, _url: string) => 0,
    inflight: 0,
    /** Requests answered: fake time, method, path, status. */
    log: [] as { at: number; method: string; path: string; status: number }[],
    release() {
      for (const r of pending.splice(0)) r();
    },
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const method = init?.method ?? "GET";
      const url = String(input);
      const path = new URL(url).pathname;
      if (net.hold(method, url)) {
        await new Promise<void>((resolve, reject) => {
          if (init?.signal?.aborted) return reject(init.signal.reason);
          pending.push(resolve);
          init?.signal?.addEventListener("abort", () => reject(init.signal!.reason), {
            once: true,
          });
        });
      }
      net.inflight++;
      try {
        const code = net.fail(method, url);
        if (code) {
          net.log.push({ at: clock.now() - START, method, path, status: code });
          return new Response(
            JSON.stringify({
              apiVersion: "v1",
              kind: "Status",
              status: "Failure",
              code,
              reason: code === 403 ? "Forbidden" : "InternalError",
              message: "injected by the test",
            }),
            { status: code, headers: { "content-type": "application/json" } },
          );
        }
        const res = await fetch(input, init);
        const body = await res.text(); // the whole answer, so "in flight" ends when it is read
        net.log.push({ at: clock.now() - START, method, path, status: res.status });
        return new Response(res.status === 204 || res.status === 304 ? null : body, {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
        });
      } finally {
        net.inflight--;
      }
    }) as typeof fetch,
  };
  return net;
}

export interface Member {
  id: string;
  m: ShardMembership;
  net: ReturnType<typeof testFetch>;
  stop: AbortController;
  done: Promise<unknown>;
  ended: boolean;
  errors: unknown[];
  changes: number;
  /** `owning` as read by its last listener call. */
  notified: boolean;
  /** Whether it runs on the harness's clock (so its timers fire as time passes). */
  onHarnessClock: boolean;
}

export async function shardHarness() {
  const server = await FakeApiServer.start();
  const client = new KubeClient({ server: server.url });
  const clock = new ManualClock(START);
  const members: Member[] = [];
  /** Keys owned by two members at once, and changes of `owning` not notified, with the (fake) time. */
  const violations: string[] = [];
  const start = (identity: string, options: Partial<ShardOptions> = {}): Member => {
    const net = testFetch(clock);
    const errors: unknown[] = [];
    const m = new ShardMembership({
      client: new KubeClient({ server: server.url, fetch: net.fetch }),
      namespace: "default",
      name: "ctrl",
      identity,
      clock,
      random: () => 0, // no jitter: every 2 s exactly
      onError: (err) => errors.push(err),
      ...options,
    });
    const stop = new AbortController();
    const member: Member = {
      id: identity,
      m,
      net,
      stop,
      done: Promise.resolve(),
      ended: false,
      errors,
      changes: 0,
      notified: false,
      onHarnessClock: options.clock === undefined,
    };
    m.onChange(() => {
      member.changes++;
      member.notified = m.owning;
    });
    member.done = m.run({ signal: stop.signal }).then(() => "ended", (err) => err).finally(
      () => (member.ended = true),
    );
    members.push(member);
    return member;
  };
  /** Waits (by condition, a few seconds of real time at most) until nothing is in flight and every running member waits on the clock. */
  const settle = async () => {
    let quiet = 0;
    for (let i = 0; i < 20_000 && quiet < 2; i++) {
      await new Promise((r) => setTimeout(r, 0));
      const busy = members.some((x) => x.net.inflight > 0);
      const waiting = members.filter((x) => !x.ended).length;
      quiet = !busy && clock.pendingTimers >= waiting ? quiet + 1 : 0;
    }
    assert.ok(quiet >= 2, `not settled: ${clock.pendingTimers} timers`);
  };
  const owners = (key: string) => members.filter((x) => x.m.owns(key)).map((x) => x.id);
  const check = () => {
    for (const key of KEYS) {
      const o = owners(key);
      if (o.length > 1) violations.push(`${clock.now() - START}: ${key} owned by ${o}`);
    }
    for (const x of members) {
      if (x.onHarnessClock && x.m.owning !== x.notified) {
        violations.push(
          `${clock.now() - START}: ${x.id} owning ${x.m.owning}, last notified ${x.notified}`,
        );
      }
    }
  };
  /** One step of fake time, then the check. */
  const step = async (ms = 100) => {
    await settle();
    await clock.advance(ms);
    await settle();
    check();
  };
  const pass = async (ms: number, stepMs = 100) => {
    for (let t = 0; t < ms; t += stepMs) await step(stepMs);
  };
  /** Steps until `cond()` (at most `maxMs`); the fake ms it took. */
  const until = async (cond: () => boolean, maxMs = 60_000) => {
    const from = clock.now();
    while (!cond() && clock.now() - from < maxMs) await step();
    assert.ok(cond(), `not within ${maxMs} ms`);
    return clock.now() - from;
  };
  const owned = (x: Member) => KEYS.filter((k) => x.m.owns(k));
  const now = () => clock.now() - START;
  const lease = (name: string) =>
    client.requestJson<
      { metadata: Record<string, unknown>; spec: Record<string, unknown> }
    >(`/apis/coordination.k8s.io/v1/namespaces/default/leases/${name}`);
  const leases = async () =>
    (await client.requestJson<{ items: { metadata: { name: string } }[] }>(
      "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    )).items.map((l) => l.metadata.name);
  /** Starts `ids` and steps until each owns, with the same members. */
  const converge = async (ids: string[]) => {
    const started = ids.map((id) => start(id));
    await until(() =>
      started.every((x) =>
        x.m.owning && x.m.members.length === members.filter((y) => !y.ended).length
      )
    );
    return started;
  };
  const close = async () => {
    for (const x of members) {
      x.net.hold = () => false;
      x.net.fail = () => 0;
      x.net.release();
      x.stop.abort();
    }
    for (let i = 0; i < 50 && members.some((x) => !x.ended); i++) {
      await clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(members.map((x) => x.done));
    await server.close();
  };
  return {
    server,
    client,
    clock,
    members,
    violations,
    start,
    settle,
    step,
    pass,
    until,
    owned,
    owners,
    now,
    lease,
    leases,
    converge,
    close,
  };
}
