// Regression: when the stored snapshot is missing and the relist does not fit one budget,
// the next run goes on from the pages saved next to the broken head (not from the start).
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, events } from "./_scripted_lister_watcher.ts";
import { bookmark, paged, setup } from "./_catch_up_pages.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";

test("catchUp goes on with its saved pages when the stored snapshot is broken", async () => {
  const t = setup(
    Array.from({ length: 2000 }, (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, "5")),
  );
  paged(t.lw);
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  /** The continue tokens of the page lists made since `from` list calls. */
  const continues = (from: number) =>
    t.lw.of("list").slice(from).map((c) => c.options as ListOptions)
      .filter((o) => o.limit !== 1).map((o) => o.continue);
  await t.complete({ budgetMs: 20_000 });
  // the snapshot is lost (e.g. deleted by another isolate's compaction that raced this one)
  const storage = t.store.storage;
  const head = new TextDecoder().decode(
    (await (await storage.get("k"))![Symbol.asyncIterator]().next()).value,
  );
  const gen = /"base":\{"gen":"([0-9a-f]{16})"/.exec(head)![1];
  await storage.delete(`k/base/${gen}`);

  let before = t.lw.of("list").length;
  const r2 = await t.complete({ budgetMs: 2_500 });
  console.log("run 2:", r2.complete, r2.saved?.written, r2.progress, continues(before));
  before = t.lw.of("list").length;
  const r3 = await t.complete({ budgetMs: 2_500 });
  console.log("run 3:", r3.complete, r3.saved?.written, r3.progress, continues(before));
  assert.equal(continues(before)[0], "c1000", "run 3 goes on from where run 2 stopped");
});
