/**
 * LeaderElector stopped while the outcome of its last write is unknown (the
 * write reached the server, its answer had not come back): it reads the
 * Lease and releases it when it names this candidate, so the next leader
 * takes over within a retry period, not a lease duration.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { LeaderElector } from "../../src/leader/leader_elector.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";

const START = Date.parse("2026-12-06T00:00:00Z");

test("LeaderElector: a candidate stopped during its acquiring write does not leave the Lease held", async () => {
  const server = await FakeApiServer.start();
  const clock = new ManualClock(START);
  let written = false;
  // the first write (the acquire) reaches the server; its answer is lost until the caller gives
  // up; later writes (the release) answer
  let writes = 0;
  const slowAnswers = (async (input: string | URL | Request, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    if (method === "GET" || ++writes !== 1) return await fetch(input, init);
    const { signal, ...rest } = init ?? {};
    const res = await fetch(input, rest);
    await res.body?.cancel();
    written = true;
    await new Promise((_, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    throw new Error("unreachable");
  }) as typeof fetch;
  const a = new LeaderElector({
    client: new KubeClient({ server: server.url, fetch: slowAnswers }),
    namespace: "default",
    name: "ctrl",
    identity: "a",
    clock,
    random: () => 0,
    onError: () => {},
  });
  const stop = new AbortController();
  const done = a.run({ signal: stop.signal });
  try {
    for (let i = 0; i < 2_000 && !written; i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(written, "a's create reached the server");
    stop.abort(); // SIGTERM
    await done;
    const lease = await new KubeClient({ server: server.url }).requestJson<
      { spec: { holderIdentity?: string } }
    >("/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl");
    assert.notEqual(
      lease.spec.holderIdentity,
      "a",
      "a stopped cleanly but the Lease stays held by it: the next leader waits a lease duration (15 s), not a retry period",
    );
  } finally {
    stop.abort();
    await done;
    await server.close();
  }
});

test("LeaderElector: a leader stopped while a renewal's answer is outstanding still releases the Lease", async () => {
  const server = await FakeApiServer.start();
  const clock = new ManualClock(START);
  let writes = 0;
  let heldWrite = false;
  // the first write (the acquire) answers; the second (a renewal) reaches the server but its
  // answer is lost until the caller gives up; later writes (the release) answer
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    if (method === "GET" || ++writes !== 2) return await fetch(input, init);
    const { signal, ...rest } = init ?? {};
    const res = await fetch(input, rest);
    await res.body?.cancel();
    heldWrite = true;
    await new Promise((_, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    throw new Error("unreachable");
  }) as typeof fetch;
  const errors: unknown[] = [];
  const a = new LeaderElector({
    client: new KubeClient({ server: server.url, fetch: f }),
    namespace: "default",
    name: "ctrl",
    identity: "a",
    clock,
    random: () => 0,
    onError: (e) => errors.push(e),
  });
  const stop = new AbortController();
  const done = a.run({ signal: stop.signal });
  try {
    for (let i = 0; i < 2_000 && !a.isLeader; i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(a.isLeader);
    for (let i = 0; i < 2_000 && clock.pendingTimers < 1; i++) {
      await new Promise((r) => setTimeout(r, 1));
    }
    await clock.advance(2_000); // the renewal
    for (let i = 0; i < 2_000 && !heldWrite; i++) await new Promise((r) => setTimeout(r, 1));
    assert.ok(heldWrite, "the renewal reached the server");
    stop.abort(); // SIGTERM while the renewal's answer is outstanding
    await done;
    const lease = await new KubeClient({ server: server.url }).requestJson<
      { spec: { holderIdentity?: string } }
    >("/apis/coordination.k8s.io/v1/namespaces/default/leases/ctrl");
    assert.notEqual(
      lease.spec.holderIdentity,
      "a",
      `released with a stale resourceVersion (errors: ${
        errors.map(String)
      }): the Lease stays held by a stopped leader`,
    );
  } finally {
    stop.abort();
    await done;
    await server.close();
  }
});
