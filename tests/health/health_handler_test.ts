import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { healthHandler } from "../../src/health/health_handler.ts";
import type { HealthReport } from "../../src/health/health_report.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import { fakeInformer, START } from "./_fake_informer.ts";

const STALE = 60_000;

function get(handler: (r: Request) => Response, path: string, init: RequestInit = {}) {
  return handler(new Request(`http://localhost${path}`, init));
}

test("healthHandler: /livez, /readyz and /healthz answer 200 with kube-apiserver's verbose text", async () => {
  const clock = new ManualClock(START);
  const handler = healthHandler({
    informers: [fakeInformer("configmaps"), fakeInformer("pods")],
    clock,
  });
  for (const probe of ["livez", "readyz", "healthz"]) {
    for (const query of ["", "?verbose", "?verbose=1&exclude=x"]) {
      const res = get(handler, `/${probe}${query}`);
      assert.equal(res.status, 200, probe);
      assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(await res.text(), `[+]configmaps ok\n[+]pods ok\n${probe} check passed\n`);
    }
  }
});

test("healthHandler: not ready (503) until every informer has synced, while live", async () => {
  const clock = new ManualClock(START);
  const pods = fakeInformer("pods", { synced: false, state: "listing" });
  const handler = healthHandler({ informers: [fakeInformer("configmaps"), pods], clock });
  await clock.advance(12_000);
  const ready = get(handler, "/readyz");
  assert.equal(ready.status, 503);
  assert.equal(
    await ready.text(),
    "[+]configmaps ok\n[-]pods failed: not synced (listing; not watching for 12s)\nreadyz check failed\n",
  );
  assert.equal(get(handler, "/healthz").status, 503);
  const live = get(handler, "/livez");
  assert.equal(live.status, 200);
  await live.body?.cancel();
  pods.synced = true;
  pods.state = "watching";
  pods.since = clock.now();
  const after = get(handler, "/readyz");
  assert.equal(after.status, 200);
  await after.body?.cancel();
});

test("healthHandler: live until an informer has not been watching for longer than staleAfterMs (the boundary exactly)", async () => {
  const clock = new ManualClock(START);
  const cm = fakeInformer("configmaps");
  const handler = healthHandler({ informers: [cm], clock, staleAfterMs: STALE });
  await clock.advance(1_000);
  cm.state = "waiting";
  cm.since = clock.now();
  cm.lastError = {
    error: new Error("GET /api/v1/configmaps: 500 InternalError"),
    phase: "watch",
    at: clock.now(),
  };
  await clock.advance(STALE);
  const at = get(handler, "/livez");
  assert.equal(at.status, 200, "exactly staleAfterMs is still live");
  assert.equal(await at.text(), "[+]configmaps ok\nlivez check passed\n");
  await clock.advance(1);
  const past = get(handler, "/livez");
  assert.equal(past.status, 503);
  assert.equal(
    await past.text(),
    "[-]configmaps failed: not watching for 1m0s (waiting: GET /api/v1/configmaps: 500 InternalError)\nlivez check failed\n",
  );
  const ready = get(handler, "/readyz");
  assert.equal(ready.status, 503, "not live is not ready either");
  await ready.body?.cancel();
  // watching again: live at once
  cm.state = "watching";
  cm.since = clock.now();
  const back = get(handler, "/livez");
  assert.equal(back.status, 200);
  await back.body?.cancel();
});

test("healthHandler: a stopped informer is neither live nor ready", async () => {
  const clock = new ManualClock(START);
  const cm = fakeInformer("configmaps", { state: "stopped" });
  const handler = healthHandler({ informers: [cm], clock });
  await clock.advance(3_000);
  const res = get(handler, "/livez");
  assert.equal(res.status, 503);
  assert.equal(
    await res.text(),
    "[-]configmaps failed: stopped (not running; not watching for 3s)\nlivez check failed\n",
  );
  const ready = get(handler, "/readyz");
  assert.equal(ready.status, 503);
  await ready.body?.cancel();
});

test("healthHandler: extra checks fail readiness, and liveness only when live", async () => {
  const clock = new ManualClock(START);
  let leading = false;
  let workersStuck = false;
  const handler = healthHandler({
    informers: [fakeInformer("configmaps")],
    clock,
    checks: [
      {
        name: "leader",
        check: () => ({ ok: leading, message: leading ? undefined : "not leading" }),
      },
      { name: "workers", check: () => ({ ok: !workersStuck, message: "stuck" }), live: true },
    ],
  });
  const ready = get(handler, "/readyz");
  assert.equal(ready.status, 503);
  assert.equal(
    await ready.text(),
    "[+]configmaps ok\n[-]leader failed: not leading\n[+]workers ok\nreadyz check failed\n",
  );
  const live = get(handler, "/livez");
  assert.equal(live.status, 200);
  assert.equal(await live.text(), "[+]configmaps ok\n[+]workers ok\nlivez check passed\n");
  leading = true;
  workersStuck = true;
  const stuck = get(handler, "/livez");
  assert.equal(stuck.status, 503);
  assert.equal(
    await stuck.text(),
    "[+]configmaps ok\n[-]workers failed: stuck\nlivez check failed\n",
  );
});

test("healthHandler: Accept: application/json gives the same facts as JSON", async () => {
  const clock = new ManualClock(START);
  const handler = healthHandler({
    informers: [
      fakeInformer("configmaps", { lastEventAt: START }),
      fakeInformer("pods", { synced: false, state: "listing" }),
    ],
    clock,
  });
  await clock.advance(2_000);
  const res = get(handler, "/readyz", { headers: { accept: "application/json" } });
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(res.headers.get("vary"), "Accept");
  const body: HealthReport = await res.json();
  assert.deepEqual(body, {
    probe: "readyz",
    ok: false,
    checks: [
      {
        name: "configmaps",
        ok: true,
        informer: {
          synced: true,
          state: "watching",
          watching: true,
          sinceMsAgo: 2_000,
          lastEventMsAgo: 2_000,
        },
      },
      {
        name: "pods",
        ok: false,
        message: "not synced (listing; not watching for 2s)",
        informer: { synced: false, state: "listing", watching: false, sinceMsAgo: 2_000 },
      },
    ],
  });
  // Accept lists: JSON when named with a q above 0
  const cases: Array<[string, string]> = [
    ["text/html, application/json;q=0.9", "application/json; charset=utf-8"],
    ["Application/JSON", "application/json; charset=utf-8"],
    ["application/json;q=0", "text/plain; charset=utf-8"],
    ["text/plain", "text/plain; charset=utf-8"],
    ["*/*", "text/plain; charset=utf-8"],
  ];
  for (const [accept, type] of cases) {
    const r = get(handler, "/livez", { headers: { accept } });
    assert.equal(r.headers.get("content-type"), type, accept);
    await r.body?.cancel();
  }
});

test("healthHandler: HEAD answers the same status and headers without a body", () => {
  const clock = new ManualClock(START);
  const pods = fakeInformer("pods", { synced: false });
  const handler = healthHandler({ informers: [pods], clock });
  const ready = get(handler, "/readyz", { method: "HEAD" });
  assert.equal(ready.status, 503);
  assert.equal(ready.body, null);
  assert.equal(ready.headers.get("content-type"), "text/plain; charset=utf-8");
  const live = get(handler, "/livez", { method: "HEAD", headers: { accept: "application/json" } });
  assert.equal(live.status, 200);
  assert.equal(live.body, null);
  assert.equal(live.headers.get("content-type"), "application/json; charset=utf-8");
  const missing = get(handler, "/nope", { method: "HEAD" });
  assert.equal(missing.status, 404);
  assert.equal(missing.body, null);
});

test("healthHandler: other paths answer 404, other methods 405 with Allow", async () => {
  const handler = healthHandler({ informers: [fakeInformer("cm")], clock: new ManualClock(START) });
  for (const path of ["/", "/livez/", "/livez/cm", "/metrics", "/LIVEZ", "/health/livez"]) {
    const res = get(handler, path);
    assert.equal(res.status, 404, path);
    assert.equal(await res.text(), "404 page not found\n");
  }
  for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
    const res = get(handler, "/readyz", { method });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    assert.equal(await res.text(), "405 method not allowed\n");
  }
});

test("healthHandler: the path option prefixes the routes", async () => {
  const handler = healthHandler({
    informers: [fakeInformer("cm")],
    clock: new ManualClock(START),
    path: "/ops/health",
  });
  for (const probe of ["livez", "readyz", "healthz"]) {
    const res = get(handler, `/ops/health/${probe}`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const bare = get(handler, `/${probe}`);
    assert.equal(bare.status, 404);
    await bare.body?.cancel();
  }
});

test("healthHandler: messages are cut to 200 characters and carry no URL query, credential or control character", async () => {
  // The library's own errors are scrubbed where they are made; the handler
  // shows only an error's name and message, sanitized again and cut.
  const clock = new ManualClock(START);
  const leaky = new Error(
    "GET https://kube.example:6443/api/v1/secrets?labelSelector=team%3Dpay&token=abc123: " +
      "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.c2ln\nsecond line " + "x".repeat(600),
  );
  const cm = fakeInformer("configmaps", {
    state: "waiting",
    lastError: { error: leaky, phase: "list", at: START },
  });
  const handler = healthHandler({
    informers: [cm],
    clock,
    staleAfterMs: STALE,
    checks: [{
      name: "webhook",
      check: () => ({
        ok: false,
        message: "call to https://hook.example/x?key=k3y failed, password=pa55 " + "y".repeat(600),
      }),
    }],
  });
  await clock.advance(STALE + 1);
  const text = await get(handler, "/readyz").text();
  const json = await get(handler, "/readyz", { headers: { accept: "application/json" } }).text();
  for (const body of [text, json]) {
    for (
      const secret of [
        "labelSelector",
        "team",
        "abc123",
        "eyJhbGciOiJSUzI1NiJ9",
        "c2VjcmV0",
        "k3y",
        "pa55",
      ]
    ) {
      assert.ok(!body.includes(secret), `${secret} leaked: ${body}`);
    }
  }
  const lines = text.split("\n");
  assert.equal(lines.length, 4); // two checks, the verdict, the final newline: no line break from the message
  assert.match(
    lines[0],
    /^\[-\]configmaps failed: not watching for 1m0s \(waiting: GET https:\/\/kube\.example:6443\/api\/v1\/secrets Authorization: \[redacted\] second line x+…\)$/,
  );
  assert.match(
    lines[1],
    /^\[-\]webhook failed: call to https:\/\/hook\.example\/x failed, password=\[redacted\] y+…$/,
  );
  const report: HealthReport = JSON.parse(json);
  assert.equal(report.checks[0].informer?.lastError?.message.length, 200);
  assert.equal(report.checks[1].message?.length, 200);
});

test("healthHandler: informer and check names with control characters stay on one line", async () => {
  const handler = healthHandler({
    informers: [fakeInformer("config\nmaps\r\n[+]fake ok")],
    clock: new ManualClock(START),
  });
  assert.equal(
    await get(handler, "/livez").text(),
    "[+]config maps [+]fake ok ok\nlivez check passed\n",
  );
});

test("healthHandler: a real Informer is ready after its sync, and not live once the server is gone for longer than staleAfterMs", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  server.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "a", namespace: "default" },
  });
  const clock = new ManualClock(START);
  const errors: unknown[] = [];
  const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
    apiVersion: "v1",
    resource: "configmaps",
  });
  const informer = new Informer(lw, {
    name: "configmaps",
    clock,
    onError: (err) => errors.push(err),
  });
  const handler = healthHandler({ informers: [informer], clock, staleAfterMs: STALE });
  const status = (path: string) => {
    const res = get(handler, path);
    res.body?.cancel();
    return res.status;
  };
  const ac = new AbortController();
  let done: Promise<void> | undefined;
  try {
    assert.equal(status("/livez"), 503, "not running yet");
    assert.equal(status("/readyz"), 503);
    done = informer.run({ signal: ac.signal });
    await informer.waitForSync();
    await server.waitForWatch();
    await waitUntil(() => informer.status.watching);
    assert.equal(status("/readyz"), 200);
    assert.equal(status("/livez"), 200);

    await server.close();
    await waitUntil(() => !informer.status.watching);
    assert.equal(informer.status.since, START);
    await clock.advance(STALE);
    assert.equal(status("/livez"), 200, "exactly staleAfterMs: still live");
    assert.equal(status("/readyz"), 200, "synced, and live");
    await clock.advance(1);
    const res = get(handler, "/livez");
    assert.equal(res.status, 503);
    assert.match(
      await res.text(),
      /^\[-\]configmaps failed: not watching for 1m0s \((waiting|connecting|listing)(: [^\n]+)?\)\nlivez check failed\n$/,
    );
    assert.equal(status("/readyz"), 503);
    assert.ok(errors.length > 0);
  } finally {
    ac.abort();
    await clock.flush();
    await done;
    await server.close();
  }
  assert.equal(status("/livez"), 503, "stopped");
});

/** Polls `condition` every few ms of real time, up to 5 s. */
async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2_500 && !condition(); i++) await new Promise((r) => setTimeout(r, 2));
  assert.ok(condition(), "condition not reached within 5 s");
}
