/**
 * nodeRequestListener on a real node:http server (Node, and Deno's node:http).
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "../_test.ts";
import { nodeRequestListener } from "../../src/health/node_request_listener.ts";
import { healthHandler } from "../../src/health/health_handler.ts";
import { ManualClock } from "../../testkit.ts";
import { fakeInformer, START } from "./_fake_informer.ts";

async function serve(handler: (request: Request) => Response | Promise<Response>) {
  const server = createServer(nodeRequestListener(handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  };
  return { url, close };
}

test("nodeRequestListener serves the health handler: GET, HEAD, JSON, 404 and 405", async () => {
  const pods = fakeInformer("pods", { synced: false, state: "listing" });
  const clock = new ManualClock(START);
  const s = await serve(healthHandler({ informers: [fakeInformer("configmaps"), pods], clock }));
  try {
    let res = await fetch(`${s.url}/livez?verbose`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.equal(await res.text(), "[+]configmaps ok\n[+]pods ok\nlivez check passed\n");

    res = await fetch(`${s.url}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(
      await res.text(),
      "[+]configmaps ok\n[-]pods failed: not synced (listing; not watching for 0ms)\nreadyz check failed\n",
    );

    res = await fetch(`${s.url}/healthz`, { headers: { accept: "application/json" } });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    assert.deepEqual((await res.json()).checks.map((c: { ok: boolean }) => c.ok), [true, false]);

    res = await fetch(`${s.url}/readyz`, { method: "HEAD" });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(await res.text(), "");

    res = await fetch(`${s.url}/nothing`);
    assert.equal(res.status, 404);
    assert.equal(await res.text(), "404 page not found\n");

    res = await fetch(`${s.url}/livez`, { method: "POST", body: "x" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    await res.body?.cancel();
  } finally {
    await s.close();
  }
});

test("nodeRequestListener hands over method, URL, headers and body, and writes status, headers and body back", async () => {
  const s = await serve(async (request) => {
    const body = await request.text();
    const headers = new Headers({ "x-echo": "1" });
    headers.append("set-cookie", "a=1");
    headers.append("set-cookie", "b=2");
    return new Response(
      JSON.stringify({
        method: request.method,
        url: request.url,
        custom: request.headers.get("x-custom"),
        body,
      }),
      { status: 201, headers },
    );
  });
  try {
    const res = await fetch(`${s.url}/some/path?q=1&r=%20`, {
      method: "PUT",
      headers: { "x-custom": "yes" },
      body: "hello ünïcode",
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("x-echo"), "1");
    assert.deepEqual(res.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.deepEqual(await res.json(), {
      method: "PUT",
      url: `${s.url}/some/path?q=1&r=%20`,
      custom: "yes",
      body: "hello ünïcode",
    });
  } finally {
    await s.close();
  }
});

test("nodeRequestListener streams a large body through with back-pressure", async () => {
  const chunk = new Uint8Array(64 * 1024).fill(7);
  const chunks = 64; // 4 MiB
  const s = await serve(() => {
    let sent = 0;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent++ < chunks) controller.enqueue(chunk);
          else controller.close();
        },
      }),
    );
  });
  try {
    const res = await fetch(`${s.url}/big`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.equal(bytes.length, chunk.length * chunks);
    assert.ok(bytes.every((b) => b === 7));
  } finally {
    await s.close();
  }
});

test("nodeRequestListener answers a bare 500 when the handler throws, rejects or returns no Response", async () => {
  const handlers: Array<(r: Request) => Response | Promise<Response>> = [
    () => {
      throw new Error("secret detail");
    },
    () => Promise.reject(new Error("secret detail")),
    () => "not a response" as unknown as Response,
  ];
  for (const handler of handlers) {
    const s = await serve(handler);
    try {
      const res = await fetch(`${s.url}/x`);
      assert.equal(res.status, 500);
      assert.equal(await res.text(), "500 internal error\n");
    } finally {
      await s.close();
    }
  }
});

test("nodeRequestListener aborts the request's signal and cancels the body when the client goes away", async () => {
  let signal: AbortSignal | undefined;
  let cancelled = false;
  const s = await serve((request) => {
    signal = request.signal;
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("first\n")); // then nothing, until cancelled
        },
        cancel() {
          cancelled = true;
        },
      }),
    );
  });
  try {
    const ac = new AbortController();
    const res = await fetch(`${s.url}/stream`, { signal: ac.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), "first\n");
    ac.abort();
    await reader.cancel().catch(() => {});
    for (let i = 0; i < 2_500 && !(cancelled && signal?.aborted); i++) {
      await new Promise((r) => setTimeout(r, 2));
    }
    assert.equal(signal?.aborted, true);
    assert.equal(cancelled, true);
  } finally {
    await s.close();
  }
});

test("nodeRequestListener rejects a handler that is not a function", () => {
  assert.throws(
    () => nodeRequestListener(undefined as unknown as () => Response),
    /nodeRequestListener: handler must be a function/,
  );
});
