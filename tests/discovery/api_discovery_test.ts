import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  ApiDiscovery,
  discover,
  KubeClient,
  KubeNetworkError,
  KubeStatusError,
  ResourceVerbError,
  UnknownResourceError,
} from "../../mod.ts";
import { FakeApiServer, type FakeApiServerOptions, ManualClock } from "../../testkit.ts";

const START = Date.parse("2026-12-06T00:00:00Z");
const WIDGETS = {
  group: "example.com",
  version: "v1",
  resource: "widgets",
  kind: "Widget",
  namespaced: true,
  shortNames: ["wd"],
};

async function withServer(
  options: FakeApiServerOptions,
  fn: (server: FakeApiServer, client: KubeClient) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start(options);
  try {
    await fn(server, new KubeClient({ server: server.url }));
  } finally {
    await server.close();
  }
}

/** A fetch answering some paths itself (an aggregated API that is down...), the rest from the server. */
function fetchWith(answers: Record<string, () => Response>): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const answer = answers[url.pathname];
    return answer ? Promise.resolve(answer()) : fetch(input, init);
  };
}

const status503 = () =>
  new Response(
    JSON.stringify({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "service unavailable",
      reason: "ServiceUnavailable",
      code: 503,
    }),
    { status: 503, headers: { "content-type": "application/json" } },
  );

for (const form of ["aggregated", "legacy"] as const) {
  test(`discover (${form} server): kubectl's names resolve to the served resources`, async () => {
    await withServer({ discovery: form, resources: [WIDGETS] }, async (server, client) => {
      const api = await discover(client);
      assert.equal(api.form, form);
      const paths = server.requests.map((r) => r.path).sort();
      if (form === "aggregated") {
        assert.deepEqual(paths, ["/api", "/apis"]);
        assert.ok(
          server.requests.every((r) =>
            r.accept?.startsWith("application/json;g=apidiscovery.k8s.io;v=v2;")
          ),
        );
      } else {
        assert.deepEqual(paths, [
          "/api",
          "/api/v1",
          "/apis",
          "/apis/apps/v1",
          "/apis/coordination.k8s.io/v1",
          "/apis/events.k8s.io/v1",
          "/apis/example.com/v1",
        ]);
      }
      const rows: Array<[string, string, string]> = [
        ["po", "v1", "pods"],
        ["Pod", "v1", "pods"],
        ["cm", "v1", "configmaps"],
        ["ns", "v1", "namespaces"],
        ["ev", "v1", "events"], // the core group wins
        ["events.events.k8s.io", "events.k8s.io/v1", "events"],
        ["deploy", "apps/v1", "deployments"],
        ["Deployment.apps", "apps/v1", "deployments"],
        ["deployments.v1.apps", "apps/v1", "deployments"],
        ["leases.coordination.k8s.io", "coordination.k8s.io/v1", "leases"],
        ["wd", "example.com/v1", "widgets"],
        ["Widget", "example.com/v1", "widgets"],
      ];
      for (const [name, apiVersion, resource] of rows) {
        const found = await api.resolve(name);
        assert.deepEqual([found.apiVersion, found.resource], [apiVersion, resource], name);
        assert.equal(api.find(name), found);
      }
      const ns = api.find("namespaces")!;
      assert.equal(ns.namespaced, false);
      assert.equal(ns.singular, "namespace");
      assert.equal(api.find("deploy")?.kind, "Deployment");
      assert.deepEqual(api.find("po")?.categories, ["all"]);
      assert.deepEqual(api.failedGroups, []);
      assert.equal(api.resources[0].group, ""); // core first
    });
  });
}

test("discover is cached per client: a second call reads nothing; a failed first read is not cached", async () => {
  await withServer({}, async (server, client) => {
    const [a, b] = await Promise.all([discover(client), discover(client)]);
    assert.equal(a, b);
    const seen = server.requestCount;
    assert.equal(await discover(client), a);
    assert.equal(server.requestCount, seen);
    const other = await discover(new KubeClient({ server: server.url }));
    assert.notEqual(other, a);

    const broken = new KubeClient({ server: server.url });
    const fault = server.inject({ verb: "get", fault: { kind: "status", code: 500 }, times: 2 });
    await assert.rejects(
      discover(broken),
      (err) => err instanceof KubeStatusError && err.code === 500,
    );
    assert.equal(fault.fired, 2);
    const api = await discover(broken); // read again
    assert.equal(api.find("po")?.resource, "pods");
  });
});

test("discover: a caller's abort rejects it alone; another caller waiting on the same read reads again", async () => {
  await withServer({}, async (_server, client) => {
    const ac = new AbortController();
    const first = discover(client, { signal: ac.signal });
    const second = discover(client);
    ac.abort(new Error("stop"));
    await assert.rejects(first, /stop/);
    const api = await second;
    assert.equal(api.find("cm")?.kind, "ConfigMap");
    const aborted = AbortSignal.abort(new Error("already"));
    await assert.rejects(discover(client, { signal: aborted }), /already/);
  });
});

test("resolve: a miss refreshes at most once per refreshIntervalMs (clock injected); a CRD added later is found", async () => {
  await withServer({}, async (server, client) => {
    const clock = new ManualClock(START);
    const api = new ApiDiscovery(client, { refreshIntervalMs: 30_000, clock });
    assert.deepEqual(api.resources, []);
    assert.equal(api.form, undefined);
    assert.equal((await api.resolve("po")).resource, "pods"); // the first miss loads it
    const reads = () => server.requests.filter((r) => r.path === "/apis").length;
    assert.equal(reads(), 1);

    server.addResource(WIDGETS); // a CRD created after the discovery
    await clock.advance(10_000);
    await assert.rejects(api.resolve("widgets"), UnknownResourceError); // within the interval: no read
    assert.equal(reads(), 1);
    await clock.advance(20_000);
    assert.equal((await api.resolve("widgets")).kind, "Widget"); // one refresh
    assert.equal(reads(), 2);
    assert.equal((await api.resolve("wd")).resource, "widgets"); // a hit reads nothing
    await assert.rejects(api.resolve("gadgets"), UnknownResourceError);
    assert.equal(reads(), 2);
    await clock.advance(30_000);
    await assert.rejects(api.resolve("gadgets"), UnknownResourceError); // one refresh, still unknown
    assert.equal(reads(), 3);
    await api.refresh(); // explicit: not limited
    assert.equal(reads(), 4);
  });
});

test("resolve: concurrent misses share one refresh", async () => {
  await withServer({}, async (server, client) => {
    const clock = new ManualClock(START);
    const api = new ApiDiscovery(client, { clock });
    const found = await Promise.all([api.resolve("po"), api.resolve("deploy"), api.resolve("cm")]);
    assert.deepEqual(found.map((r) => r.resource), ["pods", "deployments", "configmaps"]);
    assert.equal(server.requests.filter((r) => r.path === "/apis").length, 1);
    const never = new ApiDiscovery(client, { refreshIntervalMs: Infinity, clock });
    await never.refresh();
    await assert.rejects(never.resolve("nothing"), UnknownResourceError);
    assert.equal(server.requests.filter((r) => r.path === "/apis").length, 2);
  });
});

test("resolve: an unknown name is kubectl's error, with the closest names", async () => {
  await withServer({}, async (_server, client) => {
    const api = await discover(client, { refreshIntervalMs: Infinity });
    const rows: Array<[string, string[]]> = [
      ["deplyo", ["deploy", "deployments"]],
      ["Deploymnet", ["deploy", "deployments"]],
      ["confgimaps", ["cm", "configmaps"]],
      ["xyzzy", []],
    ];
    for (const [name, suggestions] of rows) {
      await assert.rejects(api.resolve(name), (err) => {
        assert.ok(err instanceof UnknownResourceError);
        assert.equal(err.input, name);
        assert.deepEqual(err.suggestions, suggestions);
        const hint = suggestions.length ? ` (did you mean ${suggestions.join(", ")}?)` : "";
        assert.equal(err.message, `the server doesn't have a resource type "${name}"${hint}`);
        return true;
      });
    }
    assert.equal(
      new UnknownResourceError("deplyo", ["deploy", "deployments"]).message,
      'the server doesn\'t have a resource type "deplyo" (did you mean deploy, deployments?)',
    );
  });
});

test("resolve with a verb: a resource without it is a ResourceVerbError", async () => {
  const bindings = {
    group: "",
    version: "v1",
    resource: "bindings",
    kind: "Binding",
    namespaced: true,
    verbs: ["create"],
  };
  await withServer({ resources: [bindings] }, async (_server, client) => {
    const api = await discover(client);
    assert.equal((await api.resolve("bindings", { verb: "create" })).kind, "Binding");
    for (const verb of ["watch", "list"]) {
      await assert.rejects(api.resolve("bindings", { verb }), (err) => {
        assert.ok(err instanceof ResourceVerbError);
        assert.equal(err.verb, verb);
        assert.equal(err.resource, api.find("bindings"));
        assert.equal(
          err.message,
          `the server does not allow "${verb}" on bindings (v1): its verbs are create`,
        );
        return true;
      });
    }
    assert.equal((await api.resolve("deploy", { verb: "watch" })).resource, "deployments");
    await assert.rejects(api.resolve("po", { verb: 1 as unknown as string }), TypeError);
  });
});

test("a group version that fails (an aggregated API down: 503) is skipped and reported in failedGroups", async () => {
  await withServer({ discovery: "legacy" }, async (server) => {
    const client = new KubeClient({
      server: server.url,
      fetch: fetchWith({ "/apis/coordination.k8s.io/v1": status503 }),
    });
    const api = await discover(client);
    assert.deepEqual(api.failedGroups.map((f) => f.groupVersion), ["coordination.k8s.io/v1"]);
    const { error } = api.failedGroups[0];
    assert.ok(error instanceof KubeStatusError && error.code === 503);
    assert.equal(api.find("leases"), undefined);
    assert.equal(api.find("deploy")?.resource, "deployments");
  });
});

test("an unknown name while a group version failed: the UnknownResourceError names the group and why, and lists it", async () => {
  await withServer({ discovery: "legacy" }, async (server) => {
    const client = new KubeClient({
      server: server.url,
      fetch: fetchWith({ "/apis/coordination.k8s.io/v1": status503 }),
    });
    const api = await discover(client, { refreshIntervalMs: Infinity });
    await assert.rejects(api.resolve("leases"), (err) => {
      assert.ok(err instanceof UnknownResourceError);
      const [failure] = api.failedGroups;
      assert.deepEqual(err.failedGroups, [failure]);
      assert.equal(
        err.message,
        `the server doesn't have a resource type "leases" (discovery failed for coordination.k8s.io/v1: ${failure.error.message})`,
      );
      assert.match(err.message, /service unavailable/);
      return true;
    });
    // a complete discovery: no failed groups in the error
    const full = await discover(new KubeClient({ server: server.url }), {
      refreshIntervalMs: Infinity,
    });
    await assert.rejects(full.resolve("leasez"), (err) => {
      assert.ok(err instanceof UnknownResourceError);
      assert.deepEqual(err.failedGroups, []);
      assert.doesNotMatch(err.message, /discovery failed/);
      return true;
    });
  });
});

test("an aggregated group version listed as Stale is skipped and reported in failedGroups", async () => {
  await withServer({}, async (server) => {
    const stale = () =>
      new Response(
        JSON.stringify({
          kind: "APIGroupDiscoveryList",
          apiVersion: "apidiscovery.k8s.io/v2",
          metadata: {},
          items: [{
            metadata: { name: "metrics.k8s.io" },
            versions: [{ version: "v1beta1", freshness: "Stale" }],
          }],
        }),
        {
          headers: {
            "content-type": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
          },
        },
      );
    const client = new KubeClient({ server: server.url, fetch: fetchWith({ "/apis": stale }) });
    const api = await discover(client);
    assert.equal(api.form, "aggregated");
    assert.deepEqual(api.failedGroups.map((f) => f.groupVersion), ["metrics.k8s.io/v1beta1"]);
    assert.equal(api.find("po")?.resource, "pods"); // /api still read
  });
});

test("errors of /api and /apis are the client's typed errors; a body that is no discovery document too", async () => {
  await withServer({ tokens: ["right"] }, async (server) => {
    const wrong = new KubeClient({ server: server.url, token: "wrong" });
    await assert.rejects(
      discover(wrong),
      (err) => err instanceof KubeStatusError && err.code === 401,
    );
    const odd = new KubeClient({
      server: server.url,
      token: "right",
      fetch: fetchWith({ "/apis": () => Response.json({ kind: "Status", status: "Success" }) }),
    });
    await assert.rejects(discover(odd), (err) => {
      assert.ok(err instanceof KubeStatusError);
      assert.match(err.message, /GET \/apis.*not a discovery document/);
      return true;
    });
    const url = server.url;
    await server.close();
    await assert.rejects(discover(new KubeClient({ server: url })), KubeNetworkError);
  });
});

test("ApiDiscovery options are validated", () => {
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  assert.throws(() => new ApiDiscovery(client, { refreshIntervalMs: -1 }), RangeError);
  assert.throws(() => new ApiDiscovery(client, { refreshIntervalMs: NaN }), RangeError);
  assert.throws(
    () => new ApiDiscovery(client, { refreshIntervalMs: "1" as unknown as number }),
    /refreshIntervalMs must be a number/,
  );
  assert.throws(() => new ApiDiscovery(client, { clock: {} as ManualClock }), TypeError);
  assert.throws(() => new ApiDiscovery(undefined as unknown as KubeClient), TypeError);
});

/** A fetch that holds each answer of `/apis`, read at once, until released (or its signal aborts). */
function gatedFetch() {
  const held: Array<() => void> = [];
  const fetchFn: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname !== "/apis") return await fetch(input, init);
    const body = await (await fetch(input, init)).text();
    await new Promise<void>((resolve, reject) => {
      const signal = init?.signal;
      const onAbort = () => reject(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      held.push(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      });
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  };
  return {
    fetch: fetchFn,
    /** `/apis` requests held so far. */
    arrived: () => held.length,
    /** Lets the `index`th held request (0: the first) go on. */
    release: (index: number) => held[index](),
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((r) => setTimeout(r, 1));
}

test("concurrent refreshes: the one started last wins, whichever ends first", async () => {
  await withServer({}, async (server) => {
    const gate = gatedFetch();
    const api = new ApiDiscovery(new KubeClient({ server: server.url, fetch: gate.fetch }));
    // the older ends first
    const older = api.refresh();
    await until(() => gate.arrived() === 1);
    server.addResource(WIDGETS);
    const newer = api.refresh();
    await until(() => gate.arrived() === 2);
    gate.release(0);
    await older;
    assert.equal(api.find("widgets"), undefined);
    gate.release(1);
    await newer;
    assert.equal(api.find("widgets")?.kind, "Widget");

    // the newer ends first: the older, ending later, does not replace it
    const stale = api.refresh();
    await until(() => gate.arrived() === 3);
    server.addResource({ ...WIDGETS, resource: "gadgets", kind: "Gadget", shortNames: [] });
    const fresh = api.refresh();
    await until(() => gate.arrived() === 4);
    gate.release(3);
    await fresh;
    assert.equal(api.find("gadgets")?.kind, "Gadget");
    gate.release(2);
    await stale;
    assert.equal(api.find("gadgets")?.kind, "Gadget");
  });
});

test("resolve: a miss joining a refresh that another caller aborts reads for itself", async () => {
  await withServer({}, async (server) => {
    const gate = gatedFetch();
    const api = new ApiDiscovery(new KubeClient({ server: server.url, fetch: gate.fetch }));
    const ac = new AbortController();
    const aborted = api.refresh({ signal: ac.signal });
    await until(() => gate.arrived() === 1);
    const resolving = api.resolve("deploy"); // joins the refresh under way
    ac.abort(new Error("stop"));
    await assert.rejects(aborted, /stop/);
    await until(() => gate.arrived() === 2); // its own read
    gate.release(1);
    assert.equal((await resolving).resource, "deployments");
  });
});
