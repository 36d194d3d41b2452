// Regression: a list in progress older than catchUp's complete objects is never gone on with,
// so the objects (and resourceVersion) never go back in time.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, ev, events } from "./_scripted_lister_watcher.ts";
import { bookmark, identity, many, paged, setup } from "./_catch_up_pages.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import type { KubeObject } from "../../src/api/types.ts";

test("catchUp never goes on with a saved list older than its complete objects", async () => {
  const t = setup([]);
  const { lw } = t;
  // a server keeping snapshots: a continue token reads the snapshot it was made at
  const snapshots = new Map<string, KubeObject[]>();
  const setServer = (rv: string, items: KubeObject[]) => {
    lw.resourceVersion = rv;
    lw.objects = items;
    snapshots.set(rv, items);
  };
  paged(lw, { snapshots });
  const run = t.complete;
  const objects = many(2000);

  // run 1: a complete checkpoint at 50
  setServer("50", objects);
  lw.onWatch = (o) => events([bookmark("50")], o);
  const r1 = await run({ budgetMs: 20_000 });
  assert.equal(r1.saved?.written, "base");

  // run 2: the server is at 60, the watch brings no proof: a consistent list, which does
  // not fit the budget: two pages saved (at 60)
  setServer("60", objects);
  lw.onWatch = (o) => events([], o, "close");
  const r2 = await run({ budgetMs: 2_500 });
  assert.equal(r2.complete, false);
  assert.equal(r2.saved?.written, "pages");

  // run 3: cm-00001 changed at 70; the watch from 50 sees it: complete at 70
  const changed = cm("cm-00001", "70", { i: "NEW" });
  setServer("70", objects.map((o) => o.metadata.name === "cm-00001" ? changed : o));
  lw.onWatch = (o) => events([ev("MODIFIED", changed)], o);
  const r3 = await run({ budgetMs: 20_000 });
  assert.equal(r3.complete, true);
  assert.equal(r3.resourceVersion, "70");
  assert.equal(r3.saved?.written, "log");
  const stored = await loadCheckpoint(t.store.storage, "k", identity, { partial: true });
  console.log(
    "after run 3: complete at",
    stored?.resourceVersion,
    "partial at",
    stored?.partial?.resourceVersion,
  );

  // run 4: the server is at 80 (a write elsewhere), no proof: a consistent list
  setServer("80", snapshots.get("70")!);
  lw.onWatch = (o) => events([], o, "close");
  const r4 = await run({ budgetMs: 20_000 });
  const back = r4.changes.filter((c) => c.key === "ns/cm-00001");
  console.log(
    "run 4:",
    r4.resourceVersion,
    r4.complete,
    r4.listed,
    back.map((c) => `${c.type} -> ${c.object.metadata.resourceVersion}`),
  );
  assert.ok(
    BigInt(r4.resourceVersion || "0") >= 70n,
    `the objects went back from 70 to ${r4.resourceVersion}`,
  );
  assert.deepEqual(back, [], "no change for cm-00001 (it did not change since 70)");
  assert.equal(r4.objects.get("ns/cm-00001")?.metadata.resourceVersion, "70");
});
