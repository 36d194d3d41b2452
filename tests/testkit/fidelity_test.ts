/**
 * The fake API server answers byte for byte like the recorded
 * kube-apiserver 1.20 (tests/fixtures/kube-apiserver-1.20/), status line,
 * headers (but Date and priority-and-fairness ones) and body. Requests
 * carry curl's User-Agent, as the recordings did, so bodies are pretty.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { fixture } from "../_fixtures.ts";
import {
  assertFixture,
  assertFixtureHead,
  bodyLines,
  configMap,
  CURL,
  fixtureConfigMaps,
  withServer,
} from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";

test("fake API server pages a list exactly like list-page1.http and list-page2.http", async () => {
  await withServer({ startResourceVersion: 192 }, async (server) => {
    for (const cm of fixtureConfigMaps()) server.create(cm);
    const page1 = await fetch(`${server.url}${FX}?limit=2`, { headers: CURL });
    await assertFixture(page1, "list-page1.http");
    const token = JSON.parse(fixture("list-page1.http").body).metadata.continue;
    const page2 = await fetch(`${server.url}${FX}?limit=2&continue=${token}`, { headers: CURL });
    await assertFixture(page2, "list-page2.http");
  });
});

test("fake API server streams watch events exactly like watch-events.http", async () => {
  await withServer({ startResourceVersion: 192, maxWatchMs: 300 }, async (server) => {
    const [cm1, cm2] = fixtureConfigMaps().map((cm) => server.create(cm));
    const recorded = fixture("watch-events.http").body.split("\n");
    const added = JSON.parse(recorded[2]).object;
    const res = await fetch(
      `${server.url}${FX}?watch=1&allowWatchBookmarks=true&resourceVersion=195&timeoutSeconds=4`,
      { headers: CURL },
    );
    assertFixtureHead(res, "watch-events.http");
    await server.waitForWatch();
    server.update({ ...cm1, data: { ...cm1.data as object, k: "changed" } });
    server.delete(cm2);
    server.create(added);
    const lines = await bodyLines(res);
    assert.deepEqual(
      lines,
      recorded.slice(0, 4),
      "MODIFIED, DELETED, ADDED, then a BOOKMARK at the timeout",
    );
  });
});

test("fake API server answers a compacted watch like watch-too-old-no-watch-cache.http", async () => {
  await withServer({}, async (server) => {
    for (let i = 0; i < 10; i++) server.create(configMap(`cm${i}`));
    server.compact();
    const res = await fetch(`${server.url}${FX}?watch=1&resourceVersion=5`, { headers: CURL });
    await assertFixture(res, "watch-too-old-no-watch-cache.http");
  });
});

test("fake API server answers a too large resourceVersion like list-rv-too-large.http", async () => {
  await withServer({ startResourceVersion: 198, tooLargeDelayMs: 20 }, async (server) => {
    let answered = false;
    const sent = fetch(`${server.url}${FX}?resourceVersion=99999999`, { headers: CURL })
      .finally(() => (answered = true));
    // A 20 ms timer started now fires before the server's, started when the request arrives.
    const answeredAt20 = new Promise<boolean>((r) => setTimeout(() => r(answered), 20));
    await assertFixture(await sent, "list-rv-too-large.http");
    assert.equal(await answeredAt20, false, "waited tooLargeDelayMs first");
  });
});

test("fake API server answers an expired continue token like list-continue-expired.http", async () => {
  await withServer({ startResourceVersion: 192 }, async (server) => {
    for (const cm of fixtureConfigMaps()) server.create(cm);
    const first = await fetch(`${server.url}${FX}?limit=1`);
    const { metadata } = await first.json();
    server.expireContinueTokens();
    const res = await fetch(`${server.url}${FX}?limit=1&continue=${metadata.continue}`, {
      headers: CURL,
    });
    await assertFixture(res, "list-continue-expired.http");
  });
});

test("fake API server rejects a streaming list like watchlist-unsupported-1.20.http", async () => {
  await withServer({}, async (server) => {
    const query =
      "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    const res = await fetch(`${server.url}${FX}?${query}`, { headers: CURL });
    await assertFixture(res, "watchlist-unsupported-1.20.http");
  });
});

test("fake API server answers an unknown resource like unknown-resource.http", async () => {
  await withServer({}, async (server) => {
    const res = await fetch(`${server.url}/api/v1/namespaces/fx/nosuchthings`, { headers: CURL });
    await assertFixture(res, "unknown-resource.http");
  });
});

test("fake API server answers a duplicate create like create-conflict.http", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("cm1"));
    const res = await fetch(`${server.url}${FX}`, {
      method: "POST",
      headers: { ...CURL, "Content-Type": "application/json" },
      body: JSON.stringify(configMap("cm1")),
    });
    await assertFixture(res, "create-conflict.http");
  });
});

test("fake API server answers a wrong bearer token like unauthorized.http", async () => {
  await withServer({ tokens: ["right"] }, async (server) => {
    const res = await fetch(`${server.url}${FX}`, {
      headers: { ...CURL, Authorization: "Bearer wrong" },
    });
    await assertFixture(res, "unauthorized.http");
  });
});

test("fake API server lists an empty grouped resource like list-deployments-empty.http", async () => {
  await withServer({ startResourceVersion: 199 }, async (server) => {
    const res = await fetch(`${server.url}/apis/apps/v1/namespaces/fx/deployments?limit=1`, {
      headers: CURL,
    });
    await assertFixture(res, "list-deployments-empty.http");
  });
});

test("fake API server writes compact JSON with a newline for programs that are not curl", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("a", "fx", { data: { html: "<b>&</b>" } }));
    const res = await fetch(`${server.url}${FX}`);
    const text = await res.text();
    assert.ok(text.endsWith("}\n") && !text.slice(0, -1).includes("\n"), "one line");
    assert.ok(text.includes("\\u003cb\\u003e\\u0026\\u003c/b\\u003e"), "HTML escaped as Go does");
    const item = JSON.parse(text).items[0];
    assert.equal(item.kind, undefined, "list items carry no kind");
    assert.equal(item.apiVersion, undefined, "list items carry no apiVersion");
    assert.equal(item.data.html, "<b>&</b>");
  });
});
