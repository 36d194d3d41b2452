// Regression (found in review): when the stored complete state cannot be loaded (its snapshot is missing or damaged)
// and the relist does not fit one budget, the pages are saved next to the broken head, but the
// next run cannot load them (the whole load fails), so it lists from the start again: the
// checkpoint never repairs and the cold-start trap of issue 31 comes back.
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, events, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import type { KubeList, WatchEvent } from "../../src/api/types.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const bookmark = (rv: string) =>
  ({
    type: "BOOKMARK",
    object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
  }) as WatchEvent;

test("catchUp goes on with its saved pages when the stored snapshot is broken", async () => {
  const clock = new ManualClock(1_800_000_000_000);
  const lw = new ScriptedListerWatcher(clock);
  const storage = memoryCheckpointStorage();
  lw.objects = Array.from({ length: 2000 }, (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, "5"));
  lw.resourceVersion = "50";
  const continues: (string | undefined)[] = [];
  lw.onList = async (o: ListOptions): Promise<KubeList> => {
    if (o.limit === 1) return { metadata: { resourceVersion: lw.resourceVersion }, items: [] };
    continues.push(o.continue);
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
  await run({ budgetMs: 20_000 });
  // the snapshot is lost (e.g. deleted by another isolate's compaction that raced this one)
  const head = new TextDecoder().decode(
    (await (await storage.get("k"))![Symbol.asyncIterator]().next()).value,
  );
  const gen = /"base":\{"gen":"([0-9a-f]{16})"/.exec(head)![1];
  await storage.delete(`k/base/${gen}`);

  continues.length = 0;
  const r2 = await run({ budgetMs: 2_500 });
  console.log("run 2:", r2.complete, r2.saved?.written, r2.progress, continues);
  continues.length = 0;
  const r3 = await run({ budgetMs: 2_500 });
  console.log("run 3:", r3.complete, r3.saved?.written, r3.progress, continues);
  assert.equal(continues[0], "c1000", "run 3 goes on from where run 2 stopped");
});
