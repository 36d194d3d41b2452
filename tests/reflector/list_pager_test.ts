import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { configMap, requestsOf } from "../_harness.ts";
import { listAllPages } from "../../src/reflector/list_pager.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../testkit.ts";

async function withServer(fn: (server: FakeApiServer) => Promise<void>): Promise<void> {
  const server = await FakeApiServer.start({ paginateResourceVersionZero: true });
  try {
    for (let i = 0; i < 23; i++) server.create(configMap(`cm-${String(i).padStart(2, "0")}`));
    await fn(server);
  } finally {
    await server.close();
  }
}

test("listAllPages follows continue tokens and returns one snapshot", async () => {
  await withServer(async (server) => {
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    const pages: number[] = [];
    const result = await listAllPages(lw, {
      resourceVersion: "0",
      pageSize: 10,
      onPage: (n) => pages.push(n),
    });
    assert.deepEqual(pages, [10, 10, 3]);
    assert.equal(result.items.length, 23);
    assert.equal(result.resourceVersion, server.resourceVersion);
    const lists = requestsOf(server, "list");
    assert.equal(lists[1].query.get("resourceVersion"), null, "no resourceVersion with continue");
    assert.ok(lists[1].query.get("continue"));
  });
});

test("an expired continue token restarts as one full list, never mixing snapshots (scenario 5)", async () => {
  await withServer(async (server) => {
    const lw = resourceListerWatcher(new KubeClient({ server: server.url }), {
      apiVersion: "v1",
      resource: "configmaps",
    });
    let page = 0;
    const result = await listAllPages(lw, {
      resourceVersion: "0",
      pageSize: 10,
      onPage: () => {
        if (++page === 1) {
          // between pages: the world changes and the token expires
          server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-00" });
          server.create(configMap("cm-99"));
          server.expireContinueTokens();
        }
      },
    });
    const names = result.items.map((o) => o.metadata.name);
    assert.equal(names.includes("cm-00"), false, "not the first snapshot");
    assert.equal(names.includes("cm-99"), true, "the new snapshot");
    assert.equal(new Set(names).size, names.length, "no duplicates");
    assert.equal(names.length, 23);
    const lists = requestsOf(server, "list");
    const last = lists.at(-1)!;
    assert.equal(last.query.get("limit"), null, "the restart is one unpaginated list");
    assert.equal(last.query.get("continue"), null);
    assert.equal(result.resourceVersion, server.resourceVersion);
  });
});

test("listAllPages rejects an invalid page size", async () => {
  const lw = { list: () => Promise.reject(new Error("unused")), async *watch() {} };
  await assert.rejects(listAllPages(lw, { pageSize: -1 }), RangeError);
});
