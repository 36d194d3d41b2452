/**
 * API Priority and Fairness: a user whose priority level has no seats (one
 * on 1.20) and rejects rather than queues gets one request at a time
 * (kube-apiserver lets a request through when nothing of its level runs).
 * Requests of that user that cannot end, admitted before the reflector starts
 * (the server's own count of the level's running requests says so), take the
 * level's seats: from then on every request of the reflector is answered 429
 * with Retry-After, whatever the timing, until the test lets them go. The
 * reflector waits the backoff and Retry-After between tries (no hot loop),
 * reports each 429, and syncs once the seats are free.
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
 * other is answered 429 at once. Returns the level's name and UID (the API server names
 * it in each response's `X-Kubernetes-PF-PriorityLevel-UID`).
 */
async function starve(
  admin: KubeClient,
  release: Release,
): Promise<{ name: string; uid: string }> {
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
  return { name: "e2e-no-seats", uid: level.metadata.uid };
}

/**
 * How many requests of priority level `name` run now, by the API server's
 * `/debug/api_priority_and_fairness/dump_priority_levels` (1.20 and 1.37:
 * comma-separated rows, the sixth column is `ExecutingRequests`).
 */
async function runningIn(admin: KubeClient, name: string): Promise<number | undefined> {
  const res = await admin.request("/debug/api_priority_and_fairness/dump_priority_levels");
  const text = await res.text();
  const [header, ...rows] = text.split("\n").map((line) => line.split(",").map((c) => c.trim()));
  const column = header.indexOf("ExecutingRequests");
  const row = rows.find((r) => r[0] === name);
  return row && column >= 0 ? Number(row[column]) : undefined;
}

/** A request that holds a seat of its priority level for as long as it is open. */
interface HeldRequest {
  /**
   * True while the server has neither answered nor closed it. Not a proof that it runs: Go's
   * HTTP/1.1 server reads a request's unread body (up to 256 KiB) before it writes a response,
   * so a refused one waits unanswered too. The level's running count is the proof.
   */
  readonly open: boolean;
  /** What the server answered, if it did (the request timed out, or the connection failed). */
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
          await res.text();
          return res.headers.get("x-kubernetes-pf-prioritylevel-uid") === level.uid;
        },
        "the limited user's requests classified to the level of no seats",
        30_000,
      );
      // Take the level's seats with requests that cannot end before we close them, one at a
      // time, each opened when the API server's own count of the level's running requests
      // (its debug dump, read as admin: exempt) equals the requests we hold, so that nothing
      // else of that user runs: the new one is admitted, and its count proves it runs. Then
      // one probe: refused, every seat is taken; admitted, there was one more seat (1.20
      // computes a level's limit from the shares of every level), so take that one too.
      // A probe or a response we have read may run a moment longer on the server: the count
      // waits for it. Nothing here depends on the order in which the server sees requests.
      const ca = cluster.pki.ca.cert;
      const server = new URL(cluster.server);
      const held: HeldRequest[] = [];
      defer(async () => {
        for (const h of held) await h.close();
      });
      const running = async () => await runningIn(admin, level.name);
      const count = (n: number, what: string) =>
        eventually(async () => (await running()) === n, what, 30_000).catch(async (err) => {
          throw new Error(`${err.message} (running: ${await running()})`);
        });
      for (;;) {
        await count(held.length, `${held.length} request(s) of the level running`);
        held.push(await heldRequest(server, ca, "tok-limited"));
        await count(held.length, `the held request ${held.length} running`);
        assert.ok(held.every((h) => h.open), "the held requests are unanswered");
        const refused = await limited.client.request(configMaps).then(
          async (r) => {
            await r.text();
            return false;
          },
          (e) => {
            if (is429(e)) return true;
            throw e;
          },
        );
        if (refused) break;
        assert.ok(held.length < 10, "10 held requests and still a seat free");
      }
      console.log(`e2e: ${held.length} held request(s) take the level's seats`);

      const target = { apiVersion: "v1", resource: "configmaps", kind: "ConfigMap", namespace: ns };
      // default backoff (800 ms doubling, capped at 30 s)
      const r = reflect(limited.client, target, {});
      // every request is refused while the seats are held: three come within 1 + 1.6 + 3.2 s
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
      for (const h of held) {
        assert.ok(h.open, `the seats were held throughout (server answered: ${h.answer})`);
      }
      assert.equal(await running(), held.length, "only the held requests ran");
      // the seats are free again
      for (const h of held) await h.close();
      const lifted = Date.now();
      await r.reflector.synced;
      console.log(`e2e: synced ${Date.now() - lifted} ms after the seats were freed`);
      await churnConfigMaps(admin, ns, { ops: 20, seed: 72, prefix: "later" });
      await assertStoreEqualsServer(r, admin, target);
      assert.ok(
        unexpectedErrors(r).every((e) => is429(e.error)),
        `only 429s reported: ${unexpectedErrors(r).map((e) => String(e.error)).join("; ")}`,
      );
    }),
);
