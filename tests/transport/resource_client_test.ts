import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { isConflict, KubeConflictError } from "../../src/api/kube_conflict_error.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isAlreadyExists, isNotFound } from "../../src/api/predicates.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceClient } from "../../src/transport/resource_client.ts";
import { FakeApiServer } from "../../testkit.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

const TOKEN = "s3cret-token-value";
const FX = { apiVersion: "v1", resource: "configmaps", namespace: "fx" };

/** What the client sent, as `fetch` saw it. */
interface Sent {
  method: string;
  contentType: string | null;
  query: URLSearchParams;
  body: unknown;
}

async function withClient(
  fn: (ctx: {
    server: FakeApiServer;
    client: KubeClient;
    cms: ReturnType<typeof resourceClient<ConfigMap>>;
    sent: Sent[];
  }) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start({ tokens: [TOKEN] });
  const sent: Sent[] = [];
  const recording: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    sent.push({
      method: init?.method ?? "GET",
      contentType: new Headers(init?.headers).get("content-type"),
      query: url.searchParams,
      body: typeof init?.body === "string" ? JSON.parse(init.body) : undefined,
    });
    return fetch(input, init);
  };
  const client = new KubeClient({ server: server.url, token: TOKEN, fetch: recording });
  try {
    await fn({ server, client, cms: resourceClient<ConfigMap>(client, FX), sent });
  } finally {
    await server.close();
  }
}

function cm(name: string, data: Record<string, string> = {}): ConfigMap {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data };
}

test("resourceClient creates, gets, lists, replaces and deletes typed objects", async () => {
  await withClient(async ({ server, cms, sent }) => {
    const created = await cms.create(cm("a", { k: "1" }));
    assert.equal(created.metadata.namespace, "fx");
    assert.equal(created.data?.k, "1");
    assert.equal(sent.at(-1)?.method, "POST");
    assert.equal(sent.at(-1)?.contentType, "application/json");
    const got = await cms.get("a");
    assert.equal(got.metadata.uid, created.metadata.uid);
    const replaced = await cms.replace({ ...got, data: { k: "2" } });
    assert.equal(replaced.data?.k, "2");
    assert.equal(sent.at(-1)?.method, "PUT");
    await cms.create(cm("b"));
    const list = await cms.list({ fieldSelector: "metadata.name=b" });
    assert.deepEqual(list.items.map((o) => o.metadata.name), ["b"]);
    assert.equal(sent.at(-1)?.query.get("fieldSelector"), "metadata.name=b");
    await cms.delete("a");
    assert.equal(sent.at(-1)?.body, undefined, "no DeleteOptions body without options");
    assert.equal(
      server.get({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "a" }),
      undefined,
    );
  });
});

test("each patch type is sent with its content type and applied", async () => {
  await withClient(async ({ server, cms, sent }) => {
    await cms.create({
      ...cm("a", { x: "1", y: "2" }),
      metadata: { name: "a", labels: { l: "1" } },
    });

    const merged = await cms.patch("a", { data: { y: null, z: "3" } }, { type: "merge" });
    assert.deepEqual(merged.data, { x: "1", z: "3" });
    assert.equal(sent.at(-1)?.contentType, "application/merge-patch+json");
    assert.equal(sent.at(-1)?.method, "PATCH");

    const byDefault = await cms.patch("a", { data: { w: "0" } });
    assert.equal(byDefault.data?.w, "0");
    assert.equal(sent.at(-1)?.contentType, "application/merge-patch+json", "merge by default");

    const json = await cms.patch("a", [
      { op: "test", path: "/data/x", value: "1" },
      { op: "replace", path: "/data/x", value: "9" },
      { op: "add", path: "/metadata/labels/app~1name", value: "web" },
      { op: "remove", path: "/data/w" },
    ], { type: "json" });
    assert.deepEqual(json.data, { x: "9", z: "3" });
    assert.deepEqual(json.metadata.labels, { l: "1", "app/name": "web" });
    assert.equal(sent.at(-1)?.contentType, "application/json-patch+json");

    const strategic = await cms.patch("a", { metadata: { labels: { l: null } } }, {
      type: "strategic",
      fieldManager: "me",
    });
    assert.deepEqual(strategic.metadata.labels, { "app/name": "web" });
    assert.equal(sent.at(-1)?.contentType, "application/strategic-merge-patch+json");
    assert.equal(sent.at(-1)?.query.get("fieldManager"), "me");

    assert.deepEqual(
      server.requests.filter((r) => r.verb === "patch").map((r) => [r.contentType, r.status]),
      [
        ["application/merge-patch+json", 200],
        ["application/merge-patch+json", 200],
        ["application/json-patch+json", 200],
        ["application/strategic-merge-patch+json", 200],
      ],
    );

    const failed = await cms.patch("a", [{ op: "test", path: "/data/x", value: "1" }], {
      type: "json",
    }).catch((e) => e);
    assert.ok(failed instanceof KubeStatusError && failed.code === 422, String(failed));

    await assert.rejects(cms.patch("a", { data: {} }, { type: "json" }), TypeError);
    await assert.rejects(cms.patch("a", [], { type: "merge" }), TypeError);
    // deno-lint-ignore no-explicit-any
    await assert.rejects(cms.patch("a", {}, { type: "yaml" as any }), TypeError);
    await assert.rejects(cms.patch("", {}), TypeError);
  });
});

test("a PATCH sent as application/json gets 415, the bug a contentType fixes", async () => {
  await withClient(async ({ client }) => {
    await resourceClient(client, FX).create(cm("a"));
    const path = "/api/v1/namespaces/fx/configmaps/a";
    const err = await client.request(path, { method: "PATCH", body: { data: { k: "v" } } })
      .catch((e) => e);
    assert.ok(err instanceof KubeStatusError && err.code === 415, String(err));
    assert.equal(err.reason, "UnsupportedMediaType");
    const patched = await client.requestJson<ConfigMap>(path, {
      method: "PATCH",
      body: { data: { k: "v" } },
      contentType: "application/merge-patch+json",
    });
    assert.deepEqual(patched.data, { k: "v" });
  });
});

test("apply needs fieldManager, sends the apply content type and force, creates then merges", async () => {
  await withClient(async ({ server, cms, sent }) => {
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      cms.apply(cm("a"), {} as any),
      (err: unknown) => err instanceof TypeError && /fieldManager/.test(err.message),
    );
    // deno-lint-ignore no-explicit-any
    await assert.rejects(cms.apply(cm("a"), undefined as any), TypeError);
    await assert.rejects(
      cms.apply({ metadata: { name: "a" } }, { fieldManager: "me" }),
      /apiVersion and kind/,
    );
    assert.equal(sent.length, 0, "nothing sent");

    const created = await cms.apply(cm("a", { k: "1" }), { fieldManager: "me" });
    assert.equal(created.data?.k, "1");
    assert.equal(server.requests.at(-1)?.status, 201);
    assert.equal(sent.at(-1)?.contentType, "application/apply-patch+yaml");
    assert.equal(sent.at(-1)?.query.get("fieldManager"), "me");
    assert.equal(sent.at(-1)?.query.has("force"), false);
    assert.deepEqual(sent.at(-1)?.body, cm("a", { k: "1" }), "the object, as JSON");

    const merged = await cms.apply(cm("a", { j: "2" }), { fieldManager: "me", force: true });
    assert.deepEqual(merged.data, { k: "1", j: "2" });
    assert.equal(server.requests.at(-1)?.status, 200);
    assert.equal(sent.at(-1)?.query.get("force"), "true");
  });
});

test("a stale replace rejects with a KubeConflictError; a taken name is AlreadyExists, not a conflict", async () => {
  await withClient(async ({ cms }) => {
    const first = await cms.create(cm("a"));
    await cms.replace({ ...first, data: { k: "1" } });
    const err = await cms.replace({ ...first, data: { k: "2" } }).catch((e) => e);
    assert.ok(err instanceof KubeConflictError);
    assert.ok(err instanceof KubeStatusError);
    assert.ok(isConflict(err));
    assert.equal(err.name, "KubeConflictError");
    assert.equal(err.code, 409);
    assert.equal(err.reason, "Conflict");
    assert.equal(err.request, "PUT /api/v1/namespaces/fx/configmaps/a");

    const taken = await cms.create(cm("a")).catch((e) => e);
    assert.ok(taken instanceof KubeStatusError && !(taken instanceof KubeConflictError));
    assert.ok(isAlreadyExists(taken) && !isConflict(taken));

    const stalePatch = await cms.patch("a", {
      metadata: { resourceVersion: first.metadata.resourceVersion },
    })
      .catch((e) => e);
    assert.ok(stalePatch instanceof KubeConflictError, "a patch carrying a stale version");
  });
});

test("a missing object is a 404 KubeStatusError that isNotFound recognises", async () => {
  await withClient(async ({ cms }) => {
    for (
      const call of [
        () => cms.get("nope"),
        () => cms.delete("nope"),
        () => cms.patch("nope", { data: {} }),
        () => cms.replace(cm("nope")),
      ]
    ) {
      const err = await call().catch((e) => e);
      assert.ok(err instanceof KubeStatusError && !(err instanceof KubeConflictError));
      assert.equal(err.code, 404);
      assert.ok(isNotFound(err));
    }
    assert.equal(isNotFound(new Error("404")), false);
  });
});

test("delete sends DeleteOptions; a failed precondition is a conflict", async () => {
  await withClient(async ({ cms, sent }) => {
    const a = await cms.create(cm("a"));
    await cms.replace({ ...a, data: { k: "1" } });
    const err = await cms.delete("a", {
      preconditions: { resourceVersion: a.metadata.resourceVersion },
    }).catch((e) => e);
    assert.ok(err instanceof KubeConflictError, String(err));
    assert.match(err.message, /Precondition failed: ResourceVersion/);
    await cms.delete("a", { propagationPolicy: "Foreground", gracePeriodSeconds: 0 });
    assert.deepEqual(sent.at(-1)?.body, {
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0,
    });
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      cms.delete("a", { propagationPolicy: "Later" as any }),
      TypeError,
    );
  });
});

test("dryRun=All answers without storing", async () => {
  await withClient(async ({ server, cms, sent }) => {
    const dry = await cms.create(cm("a", { k: "1" }), { dryRun: true });
    assert.equal(dry.data?.k, "1");
    assert.equal(sent.at(-1)?.query.get("dryRun"), "All");
    assert.equal(server.objects({ resource: "configmaps" }).length, 0);
    const a = await cms.create(cm("a"));
    await cms.patch("a", { data: { k: "2" } }, { dryRun: true });
    await cms.delete("a", { dryRun: true });
    const still = await cms.get("a");
    assert.equal(still.metadata.resourceVersion, a.metadata.resourceVersion);
  });
});

test("namespaces: a client over all namespaces writes where the object says; a mismatch is a TypeError", async () => {
  await withClient(async ({ client, cms, sent }) => {
    const all = resourceClient<ConfigMap>(client, { apiVersion: "v1", resource: "configmaps" });
    const made = await all.create({ ...cm("x"), metadata: { name: "x", namespace: "other" } });
    assert.equal(made.metadata.namespace, "other");
    assert.equal((await all.get("x", { namespace: "other" })).metadata.name, "x");
    const before = sent.length;
    await assert.rejects(
      cms.create({ ...cm("y"), metadata: { name: "y", namespace: "other" } }),
      TypeError,
    );
    await assert.rejects(cms.get("x", { namespace: "other" }), TypeError);
    assert.equal(sent.length, before, "nothing sent");
    assert.throws(() => resourceClient(client, { ...FX, name: "x" }), TypeError);
    assert.throws(
      () => resourceClient(client, { apiVersion: "v1", resource: "Config Maps" }),
      TypeError,
    );
  });
});

test("a write that fails with 503 is sent once, never retried", async () => {
  await withClient(async ({ server, cms }) => {
    const a = await cms.create(cm("a"));
    const writes: [string, () => Promise<unknown>][] = [
      ["create", () => cms.create(cm("b"))],
      ["update", () => cms.replace(a)],
      ["patch", () => cms.patch("a", { data: { k: "1" } })],
      ["patch", () => cms.apply(cm("a"), { fieldManager: "me" })],
      ["delete", () => cms.delete("a")],
    ];
    for (const [verb, write] of writes) {
      server.inject({
        verb: verb as "create",
        fault: { kind: "status", code: 503, retryAfterSeconds: 1 },
      });
      const since = server.requestCount;
      const err = await write().catch((e) => e);
      assert.ok(err instanceof KubeStatusError && err.code === 503, `${verb}: ${err}`);
      assert.equal(err.retryAfterMs, 1000);
      assert.equal(server.requestCount - since, 1, `${verb}: one request only`);
    }
  });
});

test("an aborted call rejects with the signal's reason and sends nothing", async () => {
  await withClient(async ({ cms, sent }) => {
    const ac = new AbortController();
    const reason = new Error("stop");
    ac.abort(reason);
    for (
      const call of [
        () => cms.get("a", { signal: ac.signal }),
        () => cms.create(cm("a"), { signal: ac.signal }),
        () => cms.apply(cm("a"), { fieldManager: "me", signal: ac.signal }),
        () => cms.delete("a", { signal: ac.signal }),
      ]
    ) {
      await assert.rejects(call(), (err) => err === reason);
    }
    assert.equal(sent.length, 0);
  });
});

test("no error from a write holds the token", async () => {
  await withClient(async ({ server, cms }) => {
    const a = await cms.create(cm("a"));
    await cms.replace({ ...a, data: {} });
    server.inject({ verb: "patch", fault: { kind: "status", code: 500 } });
    const errors = await Promise.all([
      cms.replace(a).catch((e) => e),
      cms.create(cm("a")).catch((e) => e),
      cms.get("missing").catch((e) => e),
      cms.patch("a", { data: {} }).catch((e) => e),
      // deno-lint-ignore no-explicit-any
      cms.apply(cm("a"), {} as any).catch((e) => e),
    ]);
    for (const err of errors) {
      assert.ok(err instanceof Error);
      for (const text of [err.message, String(err.stack), JSON.stringify(err)]) {
        assert.ok(!text.includes(TOKEN), `token in ${text}`);
      }
    }
  });
});
