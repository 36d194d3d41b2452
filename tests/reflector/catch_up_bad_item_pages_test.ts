// Regression: a list's pages are saved even when one item (no metadata) is one the watcher
// leaves out, so a first list that does not fit its budget still goes on.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, events } from "./_scripted_lister_watcher.ts";
import { bookmark, paged, setup } from "./_catch_up_pages.ts";
import type { KubeObject } from "../../src/api/types.ts";

test("a list's pages with an item the watcher leaves out are still saved", async () => {
  const t = setup(
    Array.from({ length: 2000 }, (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, "5")),
  );
  t.lw.objects[3] = { kind: "ConfigMap" } as unknown as KubeObject; // no metadata: reported, left out
  paged(t.lw);
  t.lw.onWatch = (o) => events([bookmark(t.lw.resourceVersion)], o);
  const r1 = await t.complete({ budgetMs: 2_500 });
  console.log("run 1:", r1.saved, String(r1.saveError));
  assert.equal(r1.saveError, undefined);
  assert.equal(r1.saved?.written, "pages");
});
