import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { clusterIdentity } from "../../src/checkpoint/cluster_identity.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { FakeApiServer } from "../../src/testkit/fake_api_server.ts";

const answering = (status: number, body: unknown) =>
  new KubeClient({
    server: "https://k8s.example.com",
    fetch: () =>
      Promise.resolve(
        new Response(JSON.stringify(body), {
          status,
          headers: { "content-type": "application/json" },
        }),
      ),
  });

test("clusterIdentity is the kube-system namespace's UID", async () => {
  const server = await FakeApiServer.start();
  try {
    const client = new KubeClient({ server: server.url });
    const ns = server.create({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "kube-system" },
    });
    assert.ok(ns.metadata.uid);
    assert.equal(await clusterIdentity(client), ns.metadata.uid);
    assert.equal(server.requests.at(-1)?.path, "/api/v1/namespaces/kube-system");
  } finally {
    await server.close();
  }
});

test("clusterIdentity is undefined when the namespace cannot be read: 403, 404, no UID, network failure", async () => {
  const forbidden = {
    kind: "Status",
    apiVersion: "v1",
    status: "Failure",
    reason: "Forbidden",
    code: 403,
  };
  assert.equal(await clusterIdentity(answering(403, forbidden)), undefined);
  assert.equal(
    await clusterIdentity(answering(404, { ...forbidden, reason: "NotFound", code: 404 })),
    undefined,
  );
  assert.equal(
    await clusterIdentity(answering(200, { metadata: { name: "kube-system" } })),
    undefined,
  );
  assert.equal(await clusterIdentity(answering(200, "not an object")), undefined);
  const unreachable = new KubeClient({
    server: "https://k8s.example.com",
    fetch: () => Promise.reject(new TypeError("connection refused")),
  });
  assert.equal(await clusterIdentity(unreachable), undefined);
});

test("clusterIdentity rejects with the abort reason", async () => {
  const ac = new AbortController();
  ac.abort(new Error("cancelled"));
  await assert.rejects(
    clusterIdentity(answering(200, { metadata: { uid: "u" } }), { signal: ac.signal }),
    /cancelled/,
  );
  const late = new AbortController();
  const hanging = new KubeClient({
    server: "https://k8s.example.com",
    fetch: (_url, init) =>
      new Promise((_, reject) => {
        const signal = (init as RequestInit).signal!;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
  });
  const pending = clusterIdentity(hanging, { signal: late.signal });
  late.abort(new Error("too slow"));
  await assert.rejects(pending, /too slow/);
});
