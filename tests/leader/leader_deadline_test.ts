/**
 * LeaderElector's term ends a renew deadline after the start of its last
 * successful acquire or renewal, not a renew deadline after the start of
 * the renewal attempt that is failing (a retry period later): with timings
 * where retryPeriodMs + renewDeadlineMs > leaseDurationMs (which the
 * validation accepts), the leader's signal must still abort before another
 * candidate may take the Lease.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { LeaderElector } from "../../src/leader/leader_elector.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import { gatedFetch } from "./_gated_fetch.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

test("LeaderElector: valid timings (lease 3 s, renew deadline 2.5 s, retry 1 s) never give two leaders at once", async () => {
  const server = await FakeApiServer.start();
  const clock = new ManualClock(START);
  const gateA = gatedFetch();
  /** The signals onStartedLeading received: a candidate's work runs until its signal aborts. */
  const leading = new Map<string, AbortSignal>();
  const working = (id: string) => leading.get(id)?.aborted === false;
  const mk = (identity: string, fetch?: typeof globalThis.fetch) => {
    const elector = new LeaderElector({
      client: new KubeClient({ server: server.url, ...(fetch ? { fetch } : {}) }),
      namespace: "default",
      name: "ctrl",
      identity,
      clock,
      random: () => 0,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_500, // > 1.2 × 1000: accepted
      retryPeriodMs: 1_000,
      onError: () => {},
      onStartedLeading: (sig) => {
        leading.set(identity, sig);
      },
    });
    const stop = new AbortController();
    const done = elector.run({ signal: stop.signal }).then(() => "ended", (e) => e);
    return { elector, stop, done };
  };
  const settle = async (timers: number) => {
    for (let i = 0; i < 100 && clock.pendingTimers < timers; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 5));
  };
  const a = mk("a", gateA.fetch);
  let b: ReturnType<typeof mk> | undefined;
  const overlaps: number[] = [];
  try {
    await settle(1);
    assert.ok(a.elector.isLeader, "a leads");
    // a renews at 1000; right after, b starts and sees the Lease as renewed at 1000
    for (let i = 0; i < 10; i++) {
      await settle(1);
      await clock.advance(100);
    }
    const client = new KubeClient({ server: server.url });
    for (let i = 0; i < 2_000; i++) {
      const l = await client.requestJson<{ spec: { renewTime: string } }>(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl",
      );
      if (Date.parse(l.spec.renewTime) === START + 1_000) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    await settle(1);
    b = mk("b");
    await settle(2);
    // from now on a's requests hang (a lost connection)
    gateA.hold = () => true;
    for (let t = 0; t < 5_000; t += 100) {
      await settle(2);
      await clock.advance(100);
      await settle(2);
      if (working("a") && working("b")) overlaps.push(clock.now() - START);
    }
    assert.ok(b.elector.isLeader, "b took over");
    assert.deepEqual(
      overlaps,
      [],
      `a's onStartedLeading signal (its reconciles) still not aborted while b leads, at fake ms ${
        overlaps.join(", ")
      }`,
    );
  } finally {
    gateA.hold = () => false;
    gateA.release();
    a.stop.abort();
    b?.stop.abort();
    for (let i = 0; i < 20; i++) await clock.advance(1_000);
    await a.done;
    await b?.done;
    await server.close();
  }
});
