import assert from "node:assert/strict";
import { type KubeObject, resourceClient } from "../../mod.ts";
import { serializedOnH2 } from "../../src/kubeconfig/_serialized_on_h2.ts";
import { test } from "../_test.ts";
import { cm, h2Fixture, until } from "./_h2_fixture.ts";

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** Resolves with `p`, or fails after `ms` (a guard against "never", not a timing assert). */
async function settles<T>(p: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not complete within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, guard]);
  } finally {
    clearTimeout(timer);
  }
}

test("serializedOnH2: which requests undici's h2 client would hold behind the others on a connection", () => {
  const url = "https://k8s:6443/api/v1/namespaces/a/configmaps";
  const table: [string, RequestInfo | URL, RequestInit | undefined, boolean][] = [
    ["GET", url, undefined, false],
    ["GET (explicit)", url, { method: "get" }, false],
    ["HEAD", new URL(url), { method: "HEAD" }, false],
    ["POST", url, { method: "POST", body: "{}" }, true],
    ["PUT", url, { method: "PUT", body: "{}" }, true],
    ["PATCH", url, { method: "PATCH", body: "{}" }, true],
    ["DELETE without a body", url, { method: "DELETE" }, true],
    ["DELETE with DeleteOptions", url, { method: "DELETE", body: "{}" }, true],
    ["a Request GET", new Request(url), undefined, false],
    ["a Request POST", new Request(url, { method: "POST", body: "{}" }), undefined, true],
    ["a Request GET, init says PUT", new Request(url), { method: "PUT", body: "x" }, true],
  ];
  for (const [what, input, init, expected] of table) {
    assert.equal(serializedOnH2(input, init), expected, what);
  }
});

test("writes through a kubeconfig client complete while informers watch over h2 (never behind the watches)", async () => {
  const f = await h2Fixture();
  try {
    const namespaces = ["w0", "w1", "w2", "w3"];
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    await until(() => f.server.openWatches === 4, "4 watches");
    const configMaps = resourceClient<ConfigMap>(f.conn.client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "w0",
    });
    const created = await settles(
      configMaps.create(cm("w0", "x", { v: "1" }) as ConfigMap),
      "create",
    );
    assert.equal(created.data?.v, "1");
    const merged = await settles(
      configMaps.patch("x", { data: { v: "2" } }, { type: "merge" }),
      "merge patch",
    );
    assert.equal(merged.data?.v, "2");
    const jsoned = await settles(
      configMaps.patch("x", [{ op: "replace", path: "/data/v", value: "3" }], { type: "json" }),
      "json patch",
    );
    assert.equal(jsoned.data?.v, "3");
    const replaced = await settles(
      configMaps.replace({ ...jsoned, data: { v: "4" } }),
      "replace",
    );
    assert.equal(replaced.data?.v, "4");
    // A DELETE with a body (DeleteOptions with preconditions).
    await settles(
      configMaps.delete("x", {
        preconditions: {
          uid: replaced.metadata.uid,
          resourceVersion: replaced.metadata.resourceVersion,
        },
      }),
      "delete with preconditions",
    );
    // Several writes at once, in several namespaces.
    const many = await settles(
      Promise.all(
        namespaces.flatMap((ns) =>
          [0, 1, 2].map((i) =>
            resourceClient(f.conn.client, {
              apiVersion: "v1",
              resource: "configmaps",
              namespace: ns,
            })
              .create(cm(ns, `c${i}`))
          )
        ),
      ),
      "12 concurrent creates",
    );
    assert.equal(many.length, 12);
    // The informers saw them, and their watches never ended.
    await until(
      () =>
        informers.every((inf, n) =>
          [0, 1, 2].every((i) => inf.lister().get(namespaces[n], `c${i}`) !== undefined)
        ) && informers[0].lister().get("w0", "x") === undefined,
      "every informer to see the writes",
    );
    assert.equal(f.server.openWatches, 4);
    const h2 = f.server.connections.filter((c) => c.protocol === "h2" && c.open);
    assert.ok(h2.some((c) => c.streams === 4), JSON.stringify(f.server.connections));
  } finally {
    await f.close();
  }
});
