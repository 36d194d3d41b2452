/**
 * API Priority and Fairness: a user whose priority level has no seats and
 * rejects rather than queues gets one request at a time (kube-apiserver lets
 * a request through when nothing of its level runs); while slow requests of
 * the same user hold that slot, every other request is answered 429 with
 * Retry-After. The reflector waits the backoff and Retry-After between tries
 * (no hot loop), reports each 429, and syncs once the slot is free.
 */
import assert from "node:assert/strict";
import { loadKubeConfig } from "../../kubeconfig.ts";
import { type KubeClient, KubeStatusError } from "../../mod.ts";
import { kubeconfig, writeConfig } from "../kubeconfig/_helpers.ts";
import { e2eTest, eventually, type Release, startCluster } from "./_cluster.ts";
import {
  assertStoreEqualsServer,
  churnConfigMaps,
  createNamespace,
  startReflector,
  unexpectedErrors,
} from "./_reflect.ts";

const ns = "e2e-apf";

/**
 * A priority level of (almost) no seats that rejects rather than queues, for
 * user `limited`: on the current release no seats at all and none to borrow
 * (flowcontrol v1, Kubernetes 1.29+); on 1.20 (v1beta1, shares must be
 * positive) one share of a server limited to 30 requests in flight: one seat.
 */
async function starve(admin: KubeClient, release: Release): Promise<void> {
  const version = release.current ? "v1" : "v1beta1";
  const base = `/apis/flowcontrol.apiserver.k8s.io/${version}`;
  const apiVersion = `flowcontrol.apiserver.k8s.io/${version}`;
  const post = (path: string, body: Record<string, unknown>) =>
    admin.request(path, { method: "POST", body }).then((r) => r.body?.cancel());
  await post(`${base}/prioritylevelconfigurations`, {
    apiVersion,
    kind: "PriorityLevelConfiguration",
    metadata: { name: "e2e-no-seats" },
    spec: {
      type: "Limited",
      limited: release.current
        ? {
          nominalConcurrencyShares: 0,
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: "Reject" },
        }
        : { assuredConcurrencyShares: 1, limitResponse: { type: "Reject" } },
    },
  });
  await post(`${base}/flowschemas`, {
    apiVersion,
    kind: "FlowSchema",
    metadata: { name: "e2e-no-seats" },
    spec: {
      priorityLevelConfiguration: { name: "e2e-no-seats" },
      matchingPrecedence: 100,
      distinguisherMethod: { type: "ByUser" },
      rules: [{
        subjects: [{ kind: "User", user: { name: "limited" } }],
        resourceRules: [{
          verbs: ["*"],
          apiGroups: ["*"],
          resources: ["*"],
          namespaces: ["*"],
          clusterScope: true,
        }],
        nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
      }],
    },
  });
}

/**
 * Keeps the limited user's only slot busy until `signal` aborts: two loops
 * of lists at a resourceVersion the server has not reached, which wait about
 * 3 s for it (then 504) while holding the slot.
 */
function holdTheSlot(client: KubeClient, signal: AbortSignal): Promise<unknown> {
  const loop = async () => {
    while (!signal.aborted) {
      await client.request(`/api/v1/namespaces/${ns}/configmaps`, {
        query: { resourceVersion: "999999999", resourceVersionMatch: "NotOlderThan" },
        signal,
        // a refused try is retried within 5 ms: when the held request ends, the slot is
        // free only that long, so a reflector try rarely slips through it (with 50 ms it
        // did about once in ten runs, and the reflector then synced before three 429s)
      }).then((r) => r.body?.cancel(), () => new Promise((res) => setTimeout(res, 5)));
    }
  };
  return Promise.all([loop(), loop()]);
}

const is429 = (e: unknown): e is KubeStatusError => e instanceof KubeStatusError && e.code === 429;

e2eTest(
  "429 from API Priority and Fairness: each is reported, the reflector waits between tries (no hot loop), and syncs once let through",
  async (release) => {
    const cluster = await startCluster({
      release,
      apiserverArgs: [
        "--enable-priority-and-fairness=true",
        ...(release.current
          ? []
          : ["--max-requests-inflight=20", "--max-mutating-requests-inflight=10"]),
      ],
      users: { "tok-limited": "limited" },
    });
    try {
      const admin = cluster.admin.client;
      await createNamespace(admin, ns);
      await churnConfigMaps(admin, ns, { ops: 30, seed: 71 });
      const path = await writeConfig(
        cluster.dir,
        "limited.yaml",
        kubeconfig(
          { server: cluster.server, "certificate-authority": "ca.crt" },
          { token: "tok-limited" },
          { name: "limited" },
        ),
      );
      const limited = await loadKubeConfig({ path, env: {} });
      const hold = new AbortController();
      let holding: Promise<unknown> = Promise.resolve();
      try {
        await starve(admin, release);
        holding = holdTheSlot(limited.client, hold.signal);
        // the API server applies flow-control objects asynchronously
        await eventually(
          () =>
            limited.client.request(`/api/v1/namespaces/${ns}/configmaps`).then(
              (r) => (r.body?.cancel(), false),
              (e) => is429(e),
            ),
          "a second request of the limited user is refused",
          30_000,
        );
        const target = {
          apiVersion: "v1",
          resource: "configmaps",
          kind: "ConfigMap",
          namespace: ns,
        };
        // default backoff (800 ms doubling, capped at 30 s)
        const r = startReflector(limited.client, target, {});
        try {
          await eventually(
            () => r.errors.filter((e) => is429(e.error)).length >= 3,
            "three 429s",
            30_000,
          );
          const first = r.errors.find((e) => is429(e.error))!.error as KubeStatusError;
          console.log(`e2e: APF answered: ${first.message} (Retry-After ${first.retryAfterMs} ms)`);
          assert.ok(
            first.retryAfterMs !== undefined && first.retryAfterMs > 0,
            `Retry-After read: ${first.retryAfterMs}`,
          );
          const started = Date.now();
          const before = r.errors.length;
          await new Promise((res) => setTimeout(res, 8_000));
          const tries = r.errors.length - before;
          // backoff from 800 ms doubling (jittered up to 2×) and at least Retry-After: a handful in 8 s
          assert.ok(tries <= 6, `${tries} tries in ${Date.now() - started} ms`);
          assert.equal(r.reflector.status.watching, false);
          assert.equal(r.reflector.hasSynced(), false);
          // the slot is free again
          hold.abort();
          await holding;
          const lifted = Date.now();
          await r.reflector.synced;
          console.log(`e2e: synced ${Date.now() - lifted} ms after the slot was freed`);
          await churnConfigMaps(admin, ns, { ops: 20, seed: 72, prefix: "later" });
          await assertStoreEqualsServer(r, admin, target);
          assert.ok(
            unexpectedErrors(r).every((e) => is429(e.error)),
            `only 429s reported: ${unexpectedErrors(r).map((e) => String(e.error)).join("; ")}`,
          );
        } finally {
          await r.stop();
        }
      } finally {
        hold.abort();
        await holding;
        await limited.close();
      }
    } finally {
      await cluster.stop();
    }
  },
);
