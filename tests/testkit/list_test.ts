/** LIST semantics of the fake API server: resourceVersions, pagination, snapshots, selectors. */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { configMap, withServer } from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";

async function getJson(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const names = (list: { items: { metadata: { name: string } }[] }) =>
  list.items.map((i) => i.metadata.name);

test("list returns the current objects sorted by namespace and name at the current resourceVersion", async () => {
  await withServer({}, async (server) => {
    server.create(configMap("b", "ns2"));
    server.create(configMap("z", "ns1"));
    server.create(configMap("a", "ns2"));
    for (const rv of ["", "0", "2"]) {
      const { status, headers, body } = await getJson(
        `${server.url}/api/v1/configmaps?resourceVersion=${rv}`,
      );
      assert.equal(status, 200);
      assert.equal(headers.get("content-type"), "application/json");
      assert.equal(body.kind, "ConfigMapList");
      assert.equal(body.apiVersion, "v1");
      assert.deepEqual(body.metadata, { resourceVersion: "4" });
      assert.deepEqual(
        body.items.map((i: { metadata: { namespace: string } }) => i.metadata.namespace),
        [
          "ns1",
          "ns2",
          "ns2",
        ],
      );
      assert.deepEqual(names(body), ["z", "a", "b"]);
    }
  });
});

test("list ignores limit at resourceVersion=0 like the watch cache, unless paginateResourceVersionZero", async () => {
  for (const paginate of [false, true]) {
    await withServer({ paginateResourceVersionZero: paginate }, async (server) => {
      for (const n of ["a", "b", "c"]) server.create(configMap(n));
      const { body } = await getJson(`${server.url}${FX}?resourceVersion=0&limit=1`);
      assert.equal(body.items.length, paginate ? 1 : 3);
      assert.equal(body.metadata.continue !== undefined, paginate);
    });
  }
});

test("list pages come from one snapshot taken at the first page", async () => {
  await withServer({}, async (server) => {
    for (const n of ["a", "b", "c", "d", "e"]) server.create(configMap(n));
    const page1 = (await getJson(`${server.url}${FX}?limit=2`)).body;
    assert.deepEqual(names(page1), ["a", "b"]);
    assert.equal(page1.metadata.remainingItemCount, 3);
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "d" });
    server.create(configMap("c2"));
    const page2 =
      (await getJson(`${server.url}${FX}?limit=2&continue=${page1.metadata.continue}`)).body;
    assert.deepEqual(names(page2), ["c", "d"], "no c2, d still there");
    assert.equal(page2.metadata.resourceVersion, "6");
    assert.equal(page2.metadata.remainingItemCount, 1);
    const page3 =
      (await getJson(`${server.url}${FX}?limit=2&continue=${page2.metadata.continue}`)).body;
    assert.deepEqual(names(page3), ["e"]);
    assert.deepEqual(page3.metadata, { resourceVersion: "6" }, "the last page has no continue");
    const token = JSON.parse(atob(page1.metadata.continue.replace(/-/g, "+").replace(/_/g, "/")));
    assert.deepEqual(token, { v: "meta.k8s.io/v1", rv: 6, start: "b\u0000" });
  });
});

test("continue tokens expire after continueTtlMs and then answer 410 with an inconsistent token", async () => {
  await withServer({ continueTtlMs: 30 }, async (server) => {
    for (const n of ["a", "b", "c"]) server.create(configMap(n));
    const page1 = (await getJson(`${server.url}${FX}?limit=1`)).body;
    await new Promise((r) => setTimeout(r, 50));
    const expired = await getJson(`${server.url}${FX}?limit=1&continue=${page1.metadata.continue}`);
    assert.equal(expired.status, 410);
    assert.equal(expired.body.reason, "Expired");
    server.create(configMap("b2"));
    const rest = await getJson(`${server.url}${FX}?continue=${expired.body.metadata.continue}`);
    assert.deepEqual(
      names(rest.body),
      ["b", "b2", "c"],
      "the inconsistent token continues from now",
    );
  });
});

test("a list at an older resourceVersion with limit shows that version, and 410 once compacted", async () => {
  await withServer({}, async (server) => {
    const a = server.create(configMap("a", "fx", { data: { v: "1" } }));
    server.update({ ...a, data: { v: "2" } });
    server.create(configMap("b"));
    const old = (await getJson(`${server.url}${FX}?resourceVersion=2&limit=10`)).body;
    assert.deepEqual(old.metadata, { resourceVersion: "2" });
    assert.deepEqual(old.items.map((i: { data: unknown }) => i.data), [{ v: "1" }]);
    const exact =
      (await getJson(`${server.url}${FX}?resourceVersion=3&resourceVersionMatch=Exact`)).body;
    assert.deepEqual(names(exact), ["a"]);
    const cached = (await getJson(`${server.url}${FX}?resourceVersion=2`)).body;
    assert.deepEqual(
      cached.metadata,
      { resourceVersion: "4" },
      "no limit: from the cache, not older",
    );
    server.compact();
    const gone = await getJson(`${server.url}${FX}?resourceVersion=2&limit=10`);
    assert.equal(gone.status, 410);
    assert.equal(gone.body.message, "The resourceVersion for the provided list is too old.");
  });
});

test("a list at a future resourceVersion waits for it and succeeds when it arrives in time", async () => {
  await withServer({ tooLargeDelayMs: 2_000 }, async (server) => {
    const pending = getJson(`${server.url}${FX}?resourceVersion=3`);
    await server.waitForRequests((r) => r.verb === "list");
    server.create(configMap("a"));
    server.create(configMap("b"));
    const { status, body } = await pending;
    assert.equal(status, 200);
    assert.equal(body.metadata.resourceVersion, "3");
  });
});

test("label and field selectors filter lists and drop remainingItemCount", async () => {
  await withServer({}, async (server) => {
    server.create(
      configMap("a", "fx", {
        metadata: { name: "a", namespace: "fx", labels: { app: "x", tier: "1" } },
      }),
    );
    server.create(
      configMap("b", "fx", { metadata: { name: "b", namespace: "fx", labels: { app: "y" } } }),
    );
    server.create(configMap("c", "fx", { metadata: { name: "c", namespace: "fx" } }));
    server.create(
      configMap("d", "other", {
        metadata: { name: "d", namespace: "other", labels: { app: "x" } },
      }),
    );
    const cases: [string, string[]][] = [
      ["labelSelector=app%3Dx", ["a"]],
      ["labelSelector=app%3D%3Dy", ["b"]],
      ["labelSelector=app!%3Dx", ["b", "c"]],
      ["labelSelector=app", ["a", "b"]],
      ["labelSelector=!app", ["c"]],
      ["labelSelector=app%20in%20(x%2Cy)", ["a", "b"]],
      ["labelSelector=app%20notin%20(x)", ["b", "c"]],
      ["labelSelector=app%3Dx%2Ctier", ["a"]],
      ["fieldSelector=metadata.name%3Db", ["b"]],
      ["fieldSelector=metadata.name!%3Db", ["a", "c"]],
      ["fieldSelector=metadata.namespace%3Dfx", ["a", "b", "c"]],
    ];
    for (const [query, expected] of cases) {
      const { body } = await getJson(`${server.url}${FX}?${query}`);
      assert.deepEqual(names(body), expected, query);
    }
    const page = (await getJson(`${server.url}${FX}?labelSelector=app&limit=1`)).body;
    assert.deepEqual(names(page), ["a"]);
    assert.ok(page.metadata.continue);
    assert.equal(page.metadata.remainingItemCount, undefined);
    const next = (await getJson(
      `${server.url}${FX}?labelSelector=app&limit=1&continue=${page.metadata.continue}`,
    )).body;
    assert.deepEqual(names(next), ["b"]);
    const bad = await getJson(`${server.url}${FX}?fieldSelector=spec.foo%3D1`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, "field label not supported: spec.foo");
  });
});

test("list rejects a resourceVersion with continue, and answers metadata-only when asked", async () => {
  await withServer({}, async (server) => {
    for (const n of ["a", "b"]) server.create(configMap(n, "fx", { data: { big: "x" } }));
    const page = (await getJson(`${server.url}${FX}?limit=1`)).body;
    const both = await getJson(
      `${server.url}${FX}?limit=1&resourceVersion=2&continue=${page.metadata.continue}`,
    );
    assert.equal(both.status, 400);
    assert.equal(
      both.body.message,
      "specifying resource version is not allowed when using continue",
    );
    const accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    const meta = (await getJson(`${server.url}${FX}`, { headers: { Accept: accept } })).body;
    assert.equal(meta.kind, "PartialObjectMetadataList");
    assert.equal(meta.apiVersion, "meta.k8s.io/v1");
    assert.equal(meta.items[0].kind, "PartialObjectMetadata");
    assert.equal(meta.items[0].data, undefined);
    assert.equal(meta.items[0].metadata.name, "a");
  });
});
