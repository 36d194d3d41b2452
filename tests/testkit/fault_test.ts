/** Every injectable fault of the fake API server, seen from a plain fetch client. */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { bodyLines, configMap, LineReader, withServer } from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";
const WATCH = `${FX}?watch=1&resourceVersion=0`;

test("status faults answer the real server's Status with Retry-After, then stop after `times`", async () => {
  await withServer({}, async (server) => {
    const rule = server.inject({
      verb: "list",
      resource: "configmaps",
      times: 2,
      fault: { kind: "status", code: 429 },
    });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.url}${FX}`);
      assert.equal(res.status, 429);
      assert.equal(res.headers.get("retry-after"), "1");
      const body = await res.json();
      assert.equal(body.reason, "TooManyRequests");
      assert.equal(body.details.retryAfterSeconds, 1);
    }
    assert.equal(rule.fired, 2);
    assert.equal(rule.remaining, 0);
    const ok = await fetch(`${server.url}${FX}`);
    await ok.body?.cancel();
    assert.equal(ok.status, 200);

    const expected: [number, string][] = [
      [410, "Expired"],
      [500, "InternalError"],
      [503, "ServiceUnavailable"],
      [504, "Timeout"],
      [403, "Forbidden"],
    ];
    for (const [code, reason] of expected) {
      server.inject({ verb: "watch", fault: { kind: "status", code, retryAfterSeconds: 3 } });
      const res = await fetch(`${server.url}${WATCH}`);
      assert.equal(res.status, code);
      assert.equal(res.headers.get("retry-after"), "3");
      assert.equal((await res.json()).reason, reason);
    }
  });
});

test("status faults can answer an HTML page, plain text or nothing, like proxies and filters do", async () => {
  await withServer({}, async (server) => {
    server.inject({ fault: { kind: "status", code: 502, body: "html" } });
    server.inject({ fault: { kind: "status", code: 429, body: "text" } });
    server.inject({ fault: { kind: "status", code: 503, body: "empty" } });
    const html = await fetch(`${server.url}${FX}`);
    assert.equal(html.status, 502);
    assert.equal(html.headers.get("content-type"), "text/html");
    assert.match(await html.text(), /<title>502 Bad Gateway<\/title>/);
    const text = await fetch(`${server.url}${FX}`);
    assert.equal(text.headers.get("content-type"), "text/plain; charset=utf-8");
    assert.equal(await text.text(), "Too many requests, please try again later.\n");
    const empty = await fetch(`${server.url}${FX}`);
    assert.equal(empty.status, 503);
    assert.equal(await empty.text(), "");
  });
});

test("rules match verb, resource and namespace in order; cancel removes one", async () => {
  await withServer({}, async (server) => {
    const secrets = server.inject({ resource: "secrets", fault: { kind: "status", code: 500 } });
    const other = server.inject({
      verb: "list",
      namespace: "other",
      fault: { kind: "status", code: 503 },
    });
    const watch = server.inject({ verb: "watch", fault: { kind: "status", code: 504 } });
    const res = await fetch(`${server.url}${FX}`);
    await res.body?.cancel();
    assert.equal(res.status, 200);
    assert.deepEqual([secrets.fired, other.fired, watch.fired], [0, 0, 0]);
    watch.cancel();
    const w = await fetch(`${server.url}${WATCH}&timeoutSeconds=1`);
    await w.body?.cancel();
    assert.equal(w.status, 200);
    const o = await fetch(`${server.url}/api/v1/namespaces/other/configmaps`);
    await o.body?.cancel();
    assert.equal(o.status, 503);
    assert.throws(() => server.inject({ fault: { kind: "nope" } as never }), TypeError);
    assert.throws(() => server.inject({ times: 0, fault: { kind: "close" } }), RangeError);
  });
});

test("close ends a watch cleanly after N events (0: a short watch)", async () => {
  await withServer({}, async (server) => {
    for (const n of ["a", "b", "c"]) server.create(configMap(n));
    server.inject({ verb: "watch", fault: { kind: "close" } });
    server.inject({ verb: "watch", fault: { kind: "close", afterEvents: 2 } });
    assert.deepEqual(await bodyLines(await fetch(`${server.url}${WATCH}`)), []);
    assert.equal((await bodyLines(await fetch(`${server.url}${WATCH}`))).length, 2);
  });
});

test("stall sends headers and N events, then nothing until the client gives up", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a"));
    server.inject({ verb: "watch", fault: { kind: "stall", afterEvents: 1 } });
    const res = await fetch(`${server.url}${WATCH}&timeoutSeconds=1`);
    const reader = new LineReader(res);
    assert.equal((await reader.event()).type, "ADDED");
    server.create(configMap("b"));
    const next = reader.next();
    const silence = await Promise.race([
      next.then(() => "data"),
      new Promise((r) => setTimeout(r, 1_200, "silence")),
    ]);
    assert.equal(silence, "silence", "not even the timeout ends a stalled watch");
    await reader.cancel();
    await next.catch(() => {});
    await server.waitFor(() => server.openWatches === 0);

    server.inject({ verb: "list", fault: { kind: "stall" } });
    const ac = new AbortController();
    const list = await fetch(`${server.url}${FX}`, { signal: ac.signal });
    assert.equal(list.status, 200);
    const partial = list.body!.getReader();
    const { value } = await partial.read();
    assert.ok(value && value.length > 0, "part of the body arrives");
    ac.abort();
    await partial.cancel().catch(() => {});
  });
});

test("error-event sends an ERROR event with the Status for its code after N events, then ends", async () => {
  await withServer({}, async (server) => {
    for (const n of ["a", "b"]) server.create(configMap(n));
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410, afterEvents: 1 } });
    const lines = (await bodyLines(await fetch(`${server.url}${WATCH}`))).map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    assert.equal(lines[0].type, "ADDED");
    assert.deepEqual(lines[1], {
      type: "ERROR",
      object: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: "The resourceVersion for the provided watch is too old.",
        reason: "Expired",
        code: 410,
      },
    });
    server.inject({ verb: "list", fault: { kind: "error-event", code: 500 } });
    const list = await fetch(`${server.url}${FX}`);
    await list.body?.cancel();
    assert.equal(list.status, 500, "on a list it is an HTTP error");
  });
});

test("raw writes bytes into the stream, then continues or closes", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a"));
    server.inject({
      verb: "watch",
      fault: { kind: "raw", data: "<html>oops</html>\n", afterEvents: 1 },
    });
    const res = await fetch(`${server.url}${WATCH}`);
    const reader = new LineReader(res);
    try {
      assert.equal((await reader.event()).type, "ADDED");
      assert.equal(await reader.next(), "<html>oops</html>");
      server.create(configMap("b"));
      assert.equal((await reader.event()).object.metadata.name, "b", "continues after the garbage");
    } finally {
      await reader.cancel();
    }
    server.inject({
      verb: "watch",
      fault: { kind: "raw", data: '{"type":"ADDED","obj', then: "close" },
    });
    assert.equal(await (await fetch(`${server.url}${WATCH}`)).text(), '{"type":"ADDED","obj');
    server.inject({ verb: "list", fault: { kind: "raw", data: "not json" } });
    assert.equal(await (await fetch(`${server.url}${FX}`)).text(), "not json");
  });
});

test("chunked writes the body in separately flushed chunks, split inside UTF-8 characters", async () => {
  await withServer({ maxWatchMs: 5_000 }, async (server) => {
    const unicode = "héllo ✓ 日本 😀".repeat(20);
    server.create(configMap("a", "fx", { data: { unicode } }));
    server.inject({ verb: "watch", fault: { kind: "chunked", chunkSize: 3 } });
    const res = await fetch(`${server.url}${WATCH}`);
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    const decoder = new TextDecoder();
    let text = "";
    while (!text.endsWith("\n")) {
      const { value } = await reader.read();
      chunks.push(value!);
      text += decoder.decode(value!, { stream: true });
    }
    await reader.cancel();
    assert.equal(JSON.parse(text).object.data.unicode, unicode);
    assert.ok(chunks.length > text.length / 12, `arrived in ${chunks.length} reads`);
    assert.ok(chunks.every((c) => c.length <= 12), "no coalescing into big reads");

    server.inject({
      verb: "list",
      fault: { kind: "chunked", chunkSize: "random", seed: 7, maxChunkSize: 5 },
    });
    const list = await fetch(`${server.url}${FX}`);
    assert.equal(list.headers.get("content-length"), null);
    assert.equal((await list.json()).items[0].data.unicode, unicode);
  });
});

test("reset drops the connection at request time, even one kept alive, or after N watch events", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a"));
    const warm = await fetch(`${server.url}${FX}`);
    await warm.body?.cancel();
    const rule = server.inject({ verb: "list", fault: { kind: "reset" } });
    await assert.rejects(fetch(`${server.url}${FX}`), TypeError);
    assert.equal(rule.fired, 1);
    const after = await fetch(`${server.url}${FX}`);
    await after.body?.cancel();
    assert.equal(after.status, 200, "one reset, no retry swallowed it");

    server.inject({ verb: "watch", fault: { kind: "reset", afterEvents: 1 } });
    const res = await fetch(`${server.url}${WATCH}`);
    const reader = new LineReader(res);
    assert.equal((await reader.event()).type, "ADDED");
    await assert.rejects(reader.next(), TypeError);
    await reader.cancel();
    server.inject({ verb: "list", fault: { kind: "reset", afterEvents: 0 } });
    await assert.rejects(
      (await fetch(`${server.url}${FX}`)).text(),
      TypeError,
      "half a list, then a reset",
    );
    const log = server.requests.map((r) => `${r.verb} ${r.status}`);
    assert.deepEqual(log, ["list 200", "list undefined", "list 200", "watch 200", "list 200"]);
  });
});

test("retryAfter sets the Retry-After header verbatim, valid or not; the body is unchanged", async () => {
  await withServer({}, async (server) => {
    server.inject({ verb: "list", fault: { kind: "status", code: 429, retryAfter: "soon" } });
    server.inject({
      verb: "watch",
      fault: { kind: "status", code: 503, body: "text", retryAfter: "-5" },
    });
    const list = await fetch(`${server.url}${FX}`);
    assert.equal(list.status, 429);
    assert.equal(list.headers.get("retry-after"), "soon");
    assert.equal((await list.json()).reason, "TooManyRequests");
    const watch = await fetch(`${server.url}${WATCH}`);
    assert.equal(watch.status, 503);
    assert.equal(watch.headers.get("retry-after"), "-5");
    assert.equal(watch.headers.get("content-type"), "text/plain; charset=utf-8");
    await watch.body?.cancel();
    assert.throws(
      () => server.inject({ fault: { kind: "status", code: 429, retryAfter: "1\r\nX: y" } }),
      TypeError,
    );
  });
});

test("a rule with resourceVersion matches only requests from that version", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a"));
    const rv = server.resourceVersion;
    const rule = server.inject({
      verb: "watch",
      resourceVersion: rv,
      times: Infinity,
      fault: { kind: "raw", data: "poison\n", then: "close" },
    });
    const from0 = await fetch(`${server.url}${WATCH}&timeoutSeconds=1`);
    const reader = new LineReader(from0);
    assert.equal((await reader.event()).type, "ADDED", "another version: no fault");
    await reader.cancel();
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=${rv}`);
      assert.equal(await res.text(), "poison\n");
    }
    const list = await fetch(`${server.url}${FX}?resourceVersion=${rv}`);
    assert.equal(list.status, 200);
    assert.equal((await list.json()).items.length, 1, "another verb: no fault");
    assert.equal(rule.fired, 2);
    rule.cancel();
    assert.throws(
      () => server.inject({ resourceVersion: 7 as never, fault: { kind: "close" } }),
      TypeError,
    );
  });
});
