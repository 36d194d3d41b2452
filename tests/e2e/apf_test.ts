/**
 * API Priority and Fairness: a user whose priority level has no seats (one
 * on 1.20) and rejects rather than queues gets one request at a time
 * (kube-apiserver lets a request through when nothing of its level runs).
 * One request of that user that cannot end, admitted before the reflector
 * starts, holds the seat: from then on every request of the reflector is
 * answered 429 with Retry-After, whatever the timing, until the test lets the
 * held request go. The reflector waits the backoff and Retry-After between
 * tries (no hot loop), reports each 429, and syncs once the seat is free.
 */
import assert from "node:assert/strict";
import { connect as tlsConnect } from "node:tls";
import { type KubeClient, KubeStatusError } from "../../mod.ts";
import { kubeconfig, writeConfig } from "../kubeconfig/_helpers.ts";
import { e2eTest, eventually, type Release } from "./_cluster.ts";
import { assertStoreEqualsServer, churnConfigMaps, unexpectedErrors } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-apf";
const configMaps = `/api/v1/namespaces/${ns}/configmaps`;

/**
 * A priority level of (almost) no seats that rejects rather than queues, for
 * user `limited`: on the current release no seats at all and none to borrow
 * (flowcontrol v1, Kubernetes 1.29+: `nominalConcurrencyShares: 0`,
 * `lendablePercent: 0`, `borrowingLimitPercent: 0`, so its concurrency limit
 * is 0, and a request is admitted only when none of the level runs); on 1.20
 * (v1beta1, shares must be positive) one share of a server limited to 30
 * requests in flight: a limit of 1 (ceil(30 × 1 / 206)). Either way one
 * request of the level runs at a time, and with `limitResponse: Reject` every
 * other is answered 429 at once. Returns the level's UID (the API server names
 * it in each response's `X-Kubernetes-PF-PriorityLevel-UID`).
 */
async function starve(admin: KubeClient, release: Release): Promise<string> {
  const version = release.current ? "v1" : "v1beta1";
  const base = `/apis/flowcontrol.apiserver.k8s.io/${version}`;
  const apiVersion = `flowcontrol.apiserver.k8s.io/${version}`;
  const level = await admin.requestJson<{ metadata: { uid: string } }>(
    `${base}/prioritylevelconfigurations`,
    {
      method: "POST",
      body: {
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
      },
    },
  );
  await admin.requestJson(`${base}/flowschemas`, {
    method: "POST",
    body: {
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
    },
  });
  return level.metadata.uid;
}

/** A request that holds a seat of its priority level for as long as it is open. */
interface HeldRequest {
  /** True while the server has neither answered nor closed it: admitted, it is still running. */
  readonly open: boolean;
  /** What the server answered, if it did (a 429 when the seat was taken). */
  readonly answer: string;
  /** Closes the connection: the server's read of the body fails, the request ends, the seat is free. */
  close(): Promise<void>;
}

/**
 * A create of a ConfigMap by `token` over HTTP/1.1 whose body is announced
 * (`Content-Length`) and never sent. API Priority and Fairness admits or
 * refuses a request before its handler reads the body; admitted, the handler
 * waits for the body, so the request runs, holding its seat, until the
 * connection closes (or the server's --request-timeout: 5 min here).
 */
async function heldRequest(server: URL, ca: string, token: string): Promise<HeldRequest> {
  const socket = tlsConnect({ host: server.hostname, port: Number(server.port), ca });
  let answer = "";
  let ended = false;
  socket.on("data", (d: Uint8Array) => (answer += new TextDecoder().decode(d)));
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      ended = true;
      resolve();
    })
  );
  await new Promise<void>((resolve, reject) => {
    socket.once("secureConnect", resolve);
    socket.once("error", reject);
  });
  socket.write(
    `POST ${configMaps} HTTP/1.1\r\nHost: ${server.host}\r\nAuthorization: Bearer ${token}\r\n` +
      "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
  );
  return {
    get open() {
      return !ended && answer === "";
    },
    get answer() {
      return answer;
    },
    close: async () => {
      socket.destroy();
      await closed;
    },
  };
}

const is429 = (e: unknown): e is KubeStatusError => e instanceof KubeStatusError && e.code === 429;

e2eTest(
  "429 from API Priority and Fairness: each is reported, the reflector waits between tries (no hot loop), and syncs once let through",
  (release) =>
    withCluster(release, {
      apiserverArgs: [
        "--enable-priority-and-fairness=true",
        // the held request must outlast the test's refusals (the default is 1 min)
        "--request-timeout=5m",
        ...(release.current
          ? []
          : ["--max-requests-inflight=20", "--max-mutating-requests-inflight=10"]),
      ],
      users: { "tok-limited": "limited" },
    }, async ({ cluster, admin, namespaces, connect, reflect, defer }) => {
      await namespaces(ns);
      await churnConfigMaps(admin, ns, { ops: 30, seed: 71 });
      const limited = await connect({
        path: await writeConfig(
          cluster.dir,
          "limited.yaml",
          kubeconfig(
            { server: cluster.server, "certificate-authority": "ca.crt" },
            { token: "tok-limited" },
            { name: "limited" },
          ),
        ),
      });
      const level = await starve(admin, release);
      // The API server applies flow-control objects asynchronously: wait until the limited
      // user's requests are classified to the new level (alone, they are let through).
      await eventually(
        async () => {
          const res = await limited.client.request(configMaps);
          await res.body?.cancel();
          return res.headers.get("x-kubernetes-pf-prioritylevel-uid") === level;
        },
        "the limited user's requests classified to the level of no seats",
        30_000,
      );
      // Take the seat with a request that cannot end before we close it. Once a request of
      // the same user is refused while it is open, it is the one running: nothing else of
      // that user is in flight. (Opened while a probe ran, it is refused: open another.)
      const ca = cluster.pki.ca.cert;
      const server = new URL(cluster.server);
      let held = await heldRequest(server, ca, "tok-limited");
      defer(() => held.close());
      await eventually(
        async () => {
          if (!held.open) {
            await held.close();
            held = await heldRequest(server, ca, "tok-limited");
            return false;
          }
          return await limited.client.request(configMaps).then(
            (r) => (r.body?.cancel(), false),
            (e) => is429(e),
          );
        },
        "the level's one seat held by a request that does not end",
        30_000,
      );

      const target = { apiVersion: "v1", resource: "configmaps", kind: "ConfigMap", namespace: ns };
      // default backoff (800 ms doubling, capped at 30 s)
      const r = reflect(limited.client, target, {});
      // every request is refused while the seat is held: three come within 1 + 1.6 + 3.2 s
      // (backoff with jitter) and Retry-After (1 s) of each other
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
      assert.ok(held.open, `the seat was held throughout (server answered: ${held.answer})`);
      // the seat is free again
      await held.close();
      const lifted = Date.now();
      await r.reflector.synced;
      console.log(`e2e: synced ${Date.now() - lifted} ms after the seat was freed`);
      await churnConfigMaps(admin, ns, { ops: 20, seed: 72, prefix: "later" });
      await assertStoreEqualsServer(r, admin, target);
      assert.ok(
        unexpectedErrors(r).every((e) => is429(e.error)),
        `only 429s reported: ${unexpectedErrors(r).map((e) => String(e.error)).join("; ")}`,
      );
    }),
);
