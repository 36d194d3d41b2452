/**
 * catchUp's first list across runs against the real API server: a list
 * that does not fit one budget is saved page by page and goes on from the
 * server's own continue token next run; the objects end equal to a fresh
 * list, and the next run writes only its changes. The budget runs on a
 * manual clock that each page request moves on by one second, so where it
 * runs out is decided, not timed.
 */
import assert from "node:assert/strict";
import type { KubeList, KubeObject } from "../../mod.ts";
import { catchUp, resourceListerWatcher } from "../../mod.ts";
import { checkpointCache, memoryCheckpointStorage } from "../../checkpoint.ts";
import type { ListerWatcher, ListOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";
import { e2eTest } from "./_cluster.ts";
import { configMap } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-catchup-pages";
const COUNT = 2600; // six pages of 500

e2eTest(
  "a first catchUp that does not fit its budget saves its pages and goes on from the server's continue token next run; then only changes are written",
  (release) =>
    withCluster(release, {
      // quiet 1.20 (see catch_up_test.ts): the last change's own event proves the target
      apiserverArgs: release.current ? [] : ["--endpoint-reconciler-type=none"],
    }, async ({ admin, namespaces }) => {
      await namespaces(ns);
      const create = (name: string) =>
        admin.requestJson(`/api/v1/namespaces/${ns}/configmaps`, {
          method: "POST",
          body: configMap(name, ns, { v: "1" }),
        });
      for (let i = 0; i < COUNT; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, COUNT - i) }, (_, j) => create(`cm-${i + j}`)),
        );
      }

      const clock = new ManualClock(Date.now());
      const base = resourceListerWatcher<KubeObject>(admin, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: ns,
      });
      const lists: ListOptions[] = [];
      // each page of a list (not the limit=1 target reads) costs one second of the budget
      const lw: ListerWatcher<KubeObject> = {
        ...base,
        list: async (o) => {
          if ((o.limit ?? 0) > 1) {
            lists.push({ ...o, signal: undefined });
            await clock.advance(1_000);
          }
          return await base.list(o);
        },
        watch: (o) => base.watch(o),
      };
      const storage = memoryCheckpointStorage();
      const run = (budgetMs: number) =>
        catchUp(lw, { storage, key: "cms", budgetMs, clock, onError: () => {} });

      // run 1: two pages fit (the third request starts at 3 s, past the 2.5 s budget)
      const first = await run(2_500);
      assert.equal(first.complete, false);
      assert.equal(first.objects.size, 0);
      assert.deepEqual(first.progress, { items: 1000, remaining: COUNT - 1000 });
      assert.equal(first.saved?.written, "pages");

      // created after the list's snapshot: not in its pages, brought by the watch after it
      await create("late-1");
      await create("late-2");

      // run 2: two more pages, from the token run 1 saved
      lists.length = 0;
      const second = await run(2_500);
      assert.equal(second.complete, false);
      assert.equal(second.progress?.items, 2000);
      assert.ok(lists[0]?.continue, "went on from a continue token");

      // run 3: the rest, then the watch from the list's version to the target
      lists.length = 0;
      const third = await run(60_000);
      assert.ok(lists[0]?.continue, "went on from a continue token");
      assert.equal(
        third.complete,
        true,
        JSON.stringify({ ...third, objects: third.objects.size, changes: third.changes.length }),
      );
      assert.equal(third.listed, "no-checkpoint");
      assert.equal(third.progress, undefined);
      assert.equal(third.saved?.written, "base");
      const fresh = await admin.requestJson<KubeList>(`/api/v1/namespaces/${ns}/configmaps`);
      assert.deepEqual(
        [...third.objects.values()].map((o) => o.metadata.name).sort(),
        fresh.items.map((o) => o.metadata.name).sort(),
      );
      assert.equal(third.objects.size, COUNT + 2);

      // one change: a log piece, far smaller than the snapshot; read warm through a cache
      const cache = checkpointCache();
      await catchUp(lw, { storage, key: "cms", budgetMs: 60_000, clock, cache, onError: () => {} });
      await admin.requestJson(`/api/v1/namespaces/${ns}/configmaps/cm-7`, {
        method: "PATCH",
        contentType: "application/merge-patch+json",
        body: { data: { v: "2" } },
      });
      const changed = await catchUp(lw, {
        storage,
        key: "cms",
        budgetMs: 60_000,
        clock,
        cache,
        onError: () => {},
      });
      assert.equal(changed.complete, true);
      assert.deepEqual(changed.changes.map((c) => `${c.type} ${c.key}`), [`update ${ns}/cm-7`]);
      assert.equal(changed.saved?.written, "log");
      assert.ok(changed.saved!.bytes < 3_000, `${changed.saved!.bytes} bytes for one change`);
      assert.ok(third.saved!.bytes > 100 * changed.saved!.bytes);
    }),
);
