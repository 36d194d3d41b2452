import assert from "node:assert/strict";
import { connect as connectH2 } from "node:http2";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { FakeApiServer } from "../../testkit.ts";
import { test } from "../_test.ts";
import { createPki, type Pki } from "../kubeconfig/_pki.ts";

/** GETs `paths` over one h2 session; resolves with each status once all ended, and closes the session. */
function h2Get(url: string, ca: string, paths: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const session = connectH2(url, { ca });
    session.on("error", reject);
    const statuses = paths.map((path) =>
      new Promise<number>((res, rej) => {
        const stream = session.request({ ":path": path });
        let status = 0;
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("error", rej);
        stream.resume();
        stream.on("end", () => res(status));
      })
    );
    Promise.all(statuses).then(resolve, reject).finally(() => session.close());
  });
}

function httpsGet(url: string, ca: string): Promise<{ status: number; alpn: string | false }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { ca, ALPNProtocols: ["h2", "http/1.1"], agent: false } as RequestOptions,
      (res) => {
        // deno-lint-ignore no-explicit-any
        const alpn = (res.socket as any).alpnProtocol as string | false;
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, alpn }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function withPki(fn: (pki: Pki) => Promise<void>): Promise<void> {
  const pki = await createPki();
  try {
    await fn(pki);
  } finally {
    await pki.cleanup();
  }
}

test("a TLS server with http2 serves h2 by ALPN, several requests on one connection, and reports it", async () => {
  await withPki(async (pki) => {
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    try {
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      server.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "a", namespace: "x" },
      });
      const statuses = await h2Get(server.url, pki.ca.cert, [
        "/api/v1/namespaces/x/configmaps",
        "/api/v1/namespaces/x/configmaps/a",
        "/api/v1/namespaces/x/configmaps/missing",
      ]);
      assert.deepEqual(statuses, [200, 200, 404]);
      const [c, ...rest] = server.connections;
      assert.equal(rest.length, 0);
      assert.equal(c.protocol, "h2");
      assert.equal(c.requests, 3);
      await server.waitFor(() => server.openConnections === 0); // the client closed its session
      assert.equal(server.connections[0].open, false);
      assert.equal(server.connections[0].streams, 0);
    } finally {
      await server.close();
    }
  });
});

test("a TLS server with http2 still serves an HTTP/1.1 client, and one with http2: false offers only http/1.1", async () => {
  await withPki(async (pki) => {
    const tls = { cert: pki.server.cert, key: pki.server.key };
    for (const http2 of [true, false]) {
      const server = await FakeApiServer.start({ tls, http2 });
      try {
        if (!http2) {
          // a client offering h2 gets HTTP/1.1
          const { status, alpn } = await httpsGet(`${server.url}/api/v1/namespaces`, pki.ca.cert);
          assert.equal(status, 200);
          assert.equal(alpn, "http/1.1");
        } else {
          const res = await new Promise<number>((resolve, reject) => {
            const req = httpsRequest(`${server.url}/api/v1/namespaces`, {
              ca: pki.ca.cert,
              agent: false,
            }, (r) => {
              r.resume();
              r.on("end", () => resolve(r.statusCode ?? 0));
            });
            req.on("error", reject);
            req.end();
          });
          assert.equal(res, 200);
        }
        assert.deepEqual(server.connections.map((c) => [c.protocol, c.requests]), [[
          "http/1.1",
          1,
        ]]);
      } finally {
        await server.close();
      }
    }
  });
});

test("a reset fault on one h2 watch resets its connection: every stream on it ends", async () => {
  await withPki(async (pki) => {
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
    });
    const session = connectH2(server.url, { ca: pki.ca.cert });
    session.on("error", () => {});
    try {
      const watch = (ns: string) => {
        const stream = session.request({ ":path": `/api/v1/namespaces/${ns}/configmaps?watch=1` });
        stream.resume();
        let ended = false;
        stream.on("end", () => (ended = true));
        stream.on("error", () => {});
        // Deno's http2 client reports a reset stream as ended, with a non-zero RST code
        return new Promise<string>((resolve) =>
          stream.on("close", () => resolve(ended && stream.rstCode === 0 ? "ended" : "cut"))
        );
      };
      const a = watch("a");
      await server.waitFor(() => server.openWatches === 1);
      server.inject({ verb: "watch", namespace: "b", fault: { kind: "reset", afterEvents: 0 } });
      const b = watch("b");
      assert.deepEqual(await Promise.all([a, b]), ["cut", "cut"]); // neither ended cleanly
      await server.waitFor(() => server.openWatches === 0 && server.openConnections === 0);
      assert.equal(server.connections.length, 1);
    } finally {
      session.destroy();
      await server.close();
    }
  });
});

test("maxConcurrentStreams is advertised in the h2 SETTINGS", async () => {
  await withPki(async (pki) => {
    const server = await FakeApiServer.start({
      tls: { cert: pki.server.cert, key: pki.server.key },
      maxConcurrentStreams: 4,
    });
    const session = connectH2(server.url, { ca: pki.ca.cert });
    try {
      const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve, reject) => {
        session.once("remoteSettings", resolve);
        session.once("error", reject);
      });
      assert.equal(settings.maxConcurrentStreams, 4);
    } finally {
      session.destroy();
      await server.close();
    }
  });
});

test("the TLS options are validated", async () => {
  await assert.rejects(
    FakeApiServer.start({ tls: { cert: 1 } as unknown as { cert: string; key: string } }),
    TypeError,
  );
  await assert.rejects(
    FakeApiServer.start({ tls: { cert: "", key: "" }, http2: "yes" as unknown as boolean }),
    /http2 must be a boolean/,
  );
  await assert.rejects(FakeApiServer.start({ maxConcurrentStreams: 0 }), RangeError);
  await assert.rejects(FakeApiServer.start({ maxConcurrentStreams: 1.5 }), RangeError);
});

test("a plain HTTP server reports its connections as http/1.1", async () => {
  const server = await FakeApiServer.start();
  try {
    await (await fetch(`${server.url}/api/v1/namespaces`)).text();
    assert.ok(server.connections.length >= 1);
    assert.ok(server.connections.every((c) => c.protocol === "http/1.1"));
    assert.equal(server.connections.reduce((n, c) => n + c.requests, 0), 1);
  } finally {
    await server.close();
  }
});
