import assert from "node:assert/strict";
import { inspect } from "node:util";
import { test } from "../_test.ts";
import { configMap } from "../_harness.ts";
import { fixture } from "../_fixtures.ts";
import { createServer as createNetServer } from "node:net";
import type { AddressInfo } from "node:net";
import { KubeNetworkError, KubeRedirectError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isExpired, isRetriable, isTooLargeResourceVersion } from "../../src/api/predicates.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";
import { type HttpServer, startHttpServer } from "./_http_server.ts";

async function withServer(
  fn: (server: FakeApiServer) => Promise<void>,
  tokens?: string[],
): Promise<void> {
  const server = await FakeApiServer.start({ tokens });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

test("KubeClient lists core and grouped resources over HTTP", async () => {
  await withServer(async (server) => {
    server.create(configMap("a"));
    const client = new KubeClient({ server: server.url });
    const cms = resourceListerWatcher(client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "fx",
    });
    const list = await cms.list({ resourceVersion: "0" });
    assert.equal(list.kind, "ConfigMapList");
    assert.equal(list.items[0].metadata.name, "a");
    const deps = resourceListerWatcher(client, { apiVersion: "apps/v1", resource: "deployments" });
    assert.equal((await deps.list({})).kind, "DeploymentList");
  });
});

test("KubeClient sends label and field selectors", async () => {
  await withServer(async (server) => {
    server.create(configMap("a"));
    server.create({
      ...configMap("b"),
      metadata: { name: "b", namespace: "fx", labels: { app: "other" } },
    });
    const client = new KubeClient({ server: server.url });
    const lw = resourceListerWatcher(client, {
      apiVersion: "v1",
      resource: "configmaps",
      labelSelector: "app=demo",
      fieldSelector: "metadata.namespace=fx",
    });
    const list = await lw.list({});
    assert.deepEqual(list.items.map((o) => o.metadata.name), ["a"]);
    const q = server.requests.at(-1)!.query;
    assert.equal(q.get("labelSelector"), "app=demo");
    assert.equal(q.get("fieldSelector"), "metadata.namespace=fx");
  });
});

test("KubeClient turns a 404 Status into a typed error matching the real server's", async () => {
  await withServer(async (server) => {
    const client = new KubeClient({ server: server.url });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "nosuchthings" });
    const err = await lw.list({}).catch((e) => e);
    assert.ok(err instanceof KubeStatusError);
    const recorded = JSON.parse(fixture("unknown-resource.http").body);
    assert.equal(err.code, 404);
    assert.equal(err.reason, recorded.reason);
    assert.equal(err.status?.message, recorded.message);
    assert.equal(isRetriable(err), false);
  });
});

test("KubeClient reads Retry-After and causes: 504 too-large resource version", async () => {
  await withServer(async (server) => {
    const client = new KubeClient({ server: server.url });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    const err = await lw.list({ resourceVersion: "99999999" }).catch((e) => e);
    assert.ok(err instanceof KubeStatusError);
    assert.equal(err.code, 504);
    assert.equal(err.retryAfterMs, 1000);
    assert.ok(isTooLargeResourceVersion(err));
    assert.ok(!isExpired(err));
    assert.ok(isRetriable(err));
  });
});

test("KubeClient refreshes a token once after a 401 and never leaks it", async () => {
  await withServer(async (server) => {
    const calls: boolean[] = [];
    let current = "old-secret-token";
    const client = new KubeClient({
      server: server.url,
      token: ({ refresh }) => {
        calls.push(refresh);
        if (refresh) current = "new-secret-token";
        return current;
      },
    });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    server.setTokens(["new-secret-token"]);
    await lw.list({});
    assert.deepEqual(calls, [false, true]);
    server.setTokens(["yet-another"]);
    const err = await lw.list({}).catch((e) => e);
    assert.ok(err instanceof KubeStatusError);
    assert.equal(err.code, 401);
    const shown = [
      err.message,
      String(err.stack),
      JSON.stringify(client),
      JSON.stringify(err),
      inspect(client, { showHidden: true, depth: 10 }),
      inspect(err, { showHidden: true, depth: 10 }),
    ].join("\n");
    assert.ok(!shown.includes("secret-token"), "no token in errors or JSON");
  }, ["initial"]);
});

test("KubeClient reports a refused connection as a KubeNetworkError", async () => {
  const server = await FakeApiServer.start();
  const url = server.url;
  await server.close();
  const client = new KubeClient({ server: url, token: "do-not-print-me" });
  const err = await client.request("/api/v1/pods").catch((e) => e);
  assert.ok(err instanceof KubeNetworkError);
  assert.ok(isRetriable(err));
  assert.ok(!err.message.includes("do-not-print-me"));
});

test("KubeClient rejects with the signal's reason on abort", async () => {
  await withServer(async (server) => {
    server.inject({ verb: "list", fault: { kind: "stall" } });
    const client = new KubeClient({ server: server.url });
    const ac = new AbortController();
    const reason = new Error("stop");
    const p = client.requestJson("/api/v1/configmaps", { signal: ac.signal });
    setTimeout(() => ac.abort(reason), 50);
    await assert.rejects(p, (e: unknown) => e === reason);
  });
});

test("KubeClient validates its options", () => {
  assert.throws(() => new KubeClient({ server: "not a url" }), TypeError);
  assert.throws(() => new KubeClient({ server: "ftp://x" }), TypeError);
  assert.throws(() => new KubeClient({ server: "https://user:pw@host" }), TypeError);
});

test("KubeClient refuses a malformed token without quoting it", async () => {
  await withServer(async (server) => {
    for (const bad of ["tok-SECRET-1\n# rotated", "tok-SECRET-2\u0000x", "tok SECRET-3"]) {
      const client = new KubeClient({ server: server.url, token: () => bad });
      const err = await client.request("/api/v1/configmaps").catch((e) => e);
      assert.ok(err instanceof TypeError);
      assert.ok(!err.message.includes("SECRET"), err.message);
      assert.ok(!inspect(err, { depth: 10 }).includes("SECRET"));
    }
    assert.throws(
      () =>
        new KubeClient({ server: server.url, headers: { authorization: "Basic SEC\u0000RET" } }),
      (e: unknown) => e instanceof TypeError && !e.message.includes("SEC"),
    );
    assert.equal(server.requests.length, 0, "nothing was sent");
  });
});

test("KubeClient calls fetch unbound, as workerd's fetch requires", async () => {
  await withServer(async (server) => {
    let calls = 0;
    // Like workerd: "Illegal invocation" when called as a method of another object.
    function strictFetch(
      this: unknown,
      input: RequestInfo | URL,
      init?: RequestInit,
    ): Promise<Response> {
      if (this !== undefined && this !== globalThis) {
        return Promise.reject(
          new TypeError("Illegal invocation: function called with incorrect `this` reference"),
        );
      }
      calls++;
      return globalThis.fetch(input, init);
    }
    const client = new KubeClient({ server: server.url, fetch: strictFetch as typeof fetch });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    assert.equal((await lw.list({})).kind, "ConfigMapList");
    assert.equal(calls, 1);
  });
});

test("KubeClient ignores a Retry-After that is not a finite non-negative number, in the header or the Status", async () => {
  const answers: Array<[string | undefined, unknown, number | undefined]> = [
    ["2", undefined, 2000],
    ["soon", undefined, undefined],
    ["NaN", undefined, undefined],
    ["-5", undefined, undefined],
    ["Infinity", undefined, undefined],
    ["Sun, 06 Nov 1994 08:49:37 GMT", undefined, 0],
    [undefined, 3, 3000],
    [undefined, "3", undefined],
    [undefined, -5, undefined],
    [undefined, { seconds: 3 }, undefined],
    [undefined, "Infinity", undefined],
    ["soon", 4, 4000], // an invalid header falls back to the Status
    ["1", 4, 1000], // a valid header wins
  ];
  let next = 0;
  const server = await startHttpServer((_req, res) => {
    const [header, seconds] = answers[next++];
    res.writeHead(429, {
      "content-type": "application/json",
      ...(header === undefined ? {} : { "retry-after": header }),
    });
    res.end(JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      reason: "TooManyRequests",
      code: 429,
      ...(seconds === undefined ? {} : { details: { retryAfterSeconds: seconds } }),
    }));
  });
  try {
    const client = new KubeClient({ server: server.url });
    for (const [header, seconds, want] of answers) {
      const err = await client.request("/api/v1/configmaps").catch((e) => e);
      assert.ok(err instanceof KubeStatusError, String(err));
      assert.equal(err.code, 429);
      assert.equal(err.retryAfterMs, want, `header ${header}, retryAfterSeconds ${seconds}`);
    }
  } finally {
    await server.close();
  }
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("KubeClient names a refused connection ECONNREFUSED, without query or token", async () => {
  const port = await closedPort();
  const client = new KubeClient({ server: `http://127.0.0.1:${port}`, token: "SECRET-token" });
  const err = await client
    .request("/api/v1/pods", { query: { labelSelector: "SECRET-query" } })
    .catch((e) => e);
  assert.ok(err instanceof KubeNetworkError, String(err));
  assert.equal(err.code, "ECONNREFUSED");
  assert.equal(err.message, "GET /api/v1/pods: network error: ECONNREFUSED (connection refused)");
  assert.ok(!err.message.includes("SECRET"));
});

test("KubeClient names a host that does not resolve: ENOTFOUND does-not-exist.invalid", async () => {
  // `.invalid` never resolves (RFC 6761): the resolver answers at once, even offline.
  const client = new KubeClient({ server: "http://does-not-exist.invalid:6443", token: "SECRET" });
  const err = await client
    .request("/api/v1/pods", { query: { watch: "1", SECRET: "x" } })
    .catch((e) => e);
  assert.ok(err instanceof KubeNetworkError, String(err));
  assert.equal(err.code, "ENOTFOUND", err.message);
  assert.equal(
    err.message,
    "GET /api/v1/pods: network error: ENOTFOUND does-not-exist.invalid (host not found)",
  );
});

/** A server holding other objects than the one the client is configured for. */
async function elsewhere(): Promise<HttpServer> {
  return await startHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      kind: "ConfigMapList",
      apiVersion: "v1",
      metadata: { resourceVersion: "666" },
      items: [{ metadata: { name: "IMPOSTOR", namespace: "x" } }],
    }));
  });
}

test("KubeClient refuses redirects: a typed error, no request to the target, no credentials leaked", async () => {
  const other = await elsewhere();
  for (const code of [301, 302, 303, 307, 308]) {
    const redirecting = await startHttpServer((req, res) => {
      res.writeHead(code, { location: `${other.url}${req.url}&token=SECRET-loc` });
      res.end();
    });
    try {
      const client = new KubeClient({ server: redirecting.url, token: "SECRET-token" });
      const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
      const err = await lw.list({ resourceVersion: "0" }).catch((e) => e);
      assert.ok(err instanceof KubeRedirectError, String(err));
      assert.ok(err instanceof KubeStatusError);
      assert.equal(err.code, code);
      assert.equal(err.location, `${other.url}/api/v1/configmaps`);
      assert.match(err.message, /^GET \/api\/v1\/configmaps: \d+: redirect refused \(to http:/);
      assert.ok(!inspect(err, { depth: 5 }).includes("SECRET"), inspect(err));
      assert.equal(isRetriable(err), false);
      const watch = lw.watch({ resourceVersion: "1" })[Symbol.asyncIterator]();
      const werr = await watch.next().catch((e) => e);
      assert.ok(werr instanceof KubeRedirectError, String(werr));
      assert.equal(redirecting.seen.length, 2);
      assert.equal(other.seen.length, 0, `${code}: the redirect target got no request`);
    } finally {
      await redirecting.close();
    }
  }
  await other.close();
});

test("KubeClient refuses the answer of a fetch that followed a redirect anyway", async () => {
  const other = await elsewhere();
  const redirecting = await startHttpServer((req, res) => {
    res.writeHead(302, { location: `${other.url}${req.url}` });
    res.end();
  });
  try {
    const following: typeof fetch = (input, init) => fetch(input, { ...init, redirect: "follow" });
    const client = new KubeClient({ server: redirecting.url, fetch: following });
    const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
    const err = await lw.list({}).catch((e) => e);
    assert.ok(err instanceof KubeRedirectError, String(err));
    assert.equal(err.code, 0);
    assert.equal(err.location, `${other.url}/api/v1/configmaps`);
  } finally {
    await redirecting.close();
    await other.close();
  }
});

test("KubeClient turns an opaque redirect into a KubeRedirectError", async () => {
  const opaque: typeof fetch = () => {
    const res = new Response(null, { status: 200 });
    Object.defineProperty(res, "type", { value: "opaqueredirect" });
    Object.defineProperty(res, "status", { value: 0 });
    return Promise.resolve(res);
  };
  const client = new KubeClient({ server: "http://127.0.0.1:1", fetch: opaque });
  const err = await client.request("/api/v1/pods").catch((e) => e);
  assert.ok(err instanceof KubeRedirectError, String(err));
  assert.equal(err.code, 0);
  assert.equal(err.location, undefined);
});

test("KubeClient.request refuses a path holding a query (it would be sent encoded, inside the path) or not starting with /, before any request", async () => {
  let calls = 0;
  const client = new KubeClient({
    server: "http://127.0.0.1:1",
    fetch: (() => {
      calls++;
      return Promise.resolve(new Response("{}"));
    }) as typeof fetch,
  });
  for (const path of ["/api/v1/pods?watch=1", "/api/v1/pods#x", "api/v1/pods"]) {
    await assert.rejects(client.request(path), {
      name: "TypeError",
      message: /the query goes in options\.query/,
    });
  }
  assert.equal(calls, 0);
  await client.request("/api/v1/pods", { query: { watch: "1" } });
  assert.equal(calls, 1);
});
