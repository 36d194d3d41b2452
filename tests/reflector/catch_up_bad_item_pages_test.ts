// Regression (found in review): ListProgress saves a list's pages as the server sent them, before the watcher's
// checks; one item the watcher leaves out (no metadata object) makes every save of the
// progress fail with a TypeError, so a first list that does not fit a budget never goes on.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, events, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const bookmark = (rv: string) =>
  ({
    type: "BOOKMARK",
    object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
  }) as WatchEvent;

test("a list's pages with an item the watcher leaves out are still saved", async () => {
  const clock = new ManualClock(1_800_000_000_000);
  const lw = new ScriptedListerWatcher(clock);
  const storage = memoryCheckpointStorage();
  lw.objects = Array.from({ length: 2000 }, (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, "5"));
  lw.objects[3] = { kind: "ConfigMap" } as unknown as KubeObject; // no metadata: reported, left out
  lw.resourceVersion = "50";
  lw.onList = async (o: ListOptions): Promise<KubeList> => {
    if (o.limit === 1) return { metadata: { resourceVersion: lw.resourceVersion }, items: [] };
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 1_000));
    const start = o.continue ? Number(o.continue.slice(1)) : 0;
    const end = Math.min(start + (o.limit ?? 1e9), lw.objects.length);
    return {
      metadata: {
        resourceVersion: lw.resourceVersion,
        ...(end < lw.objects.length ? { continue: `c${end}` } : {}),
      },
      items: lw.objects.slice(start, end),
    };
  };
  lw.onWatch = (o) => events([bookmark(lw.resourceVersion)], o);
  const run = async (options: Partial<CatchUpOptions> = {}): Promise<CatchUpResult> => {
    let done = false, result: CatchUpResult | undefined, failure: unknown;
    catchUp(lw, {
      storage,
      key: "k",
      identity,
      clock,
      random: () => 0,
      onError: () => {},
      ...options,
    })
      .then((r) => (result = r), (e) => (failure = e)).finally(() => (done = true));
    while (!done) await clock.advance(100);
    if (failure) throw failure;
    return result!;
  };
  const r1 = await run({ budgetMs: 2_500 });
  console.log("run 1:", r1.saved, String(r1.saveError));
  assert.equal(r1.saveError, undefined);
  assert.equal(r1.saved?.written, "pages");
});
