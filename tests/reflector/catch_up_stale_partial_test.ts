// Regression (found in review): a list in progress saved by an earlier run stays in the checkpoint after a later
// run brought the complete objects past the list's version; the next relist goes on from
// that old continue token, so catchUp's objects go BACK in time (an update to an older
// object is reported as a change, and resourceVersion moves backwards).
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, ev, events, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import type { KubeList, KubeObject, WatchEvent } from "../../src/api/types.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const bookmark = (rv: string) =>
  ({
    type: "BOOKMARK",
    object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
  }) as WatchEvent;

test("catchUp never goes on with a saved list older than its complete objects", async () => {
  const clock = new ManualClock(1_800_000_000_000);
  const lw = new ScriptedListerWatcher(clock);
  const storage = memoryCheckpointStorage();
  const errors: unknown[] = [];
  // a server keeping snapshots: a continue token reads the snapshot it was made at
  const snapshots = new Map<string, KubeObject[]>();
  const setServer = (rv: string, objects: KubeObject[]) => {
    lw.resourceVersion = rv;
    lw.objects = objects;
    snapshots.set(rv, objects);
  };
  lw.onList = async (o: ListOptions): Promise<KubeList> => {
    if (o.limit === 1) return { metadata: { resourceVersion: lw.resourceVersion }, items: [] };
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 1_000));
    let rv = lw.resourceVersion, start = 0;
    if (o.continue) {
      const m = /^c(\d+)@(\d+)$/.exec(o.continue)!;
      start = Number(m[1]);
      rv = m[2];
    }
    const objects = snapshots.get(rv)!;
    const limit = o.limit ?? objects.length;
    const end = Math.min(start + limit, objects.length);
    const more = end < objects.length;
    return {
      metadata: { resourceVersion: rv, ...(more ? { continue: `c${end}@${rv}` } : {}) },
      items: objects.slice(start, end),
    };
  };
  const run = async (options: Partial<CatchUpOptions> = {}): Promise<CatchUpResult> => {
    let done = false, result: CatchUpResult | undefined, failure: unknown;
    catchUp(lw, {
      storage,
      key: "k",
      identity,
      clock,
      random: () => 0,
      onError: (e) => errors.push(e),
      ...options,
    }).then((r) => (result = r), (e) => (failure = e)).finally(() => (done = true));
    while (!done) await clock.advance(100);
    if (failure) throw failure;
    return result!;
  };
  const many = Array.from(
    { length: 2000 },
    (_, i) => cm(`cm-${String(i).padStart(5, "0")}`, "5", { i: String(i) }),
  );

  // run 1: a complete checkpoint at 50
  setServer("50", many);
  lw.onWatch = (o) => events([bookmark("50")], o);
  const r1 = await run({ budgetMs: 20_000 });
  assert.equal(r1.saved?.written, "base");

  // run 2: the server is at 60, the watch brings no proof: a consistent list, which does
  // not fit the budget: two pages saved (at 60)
  setServer("60", many);
  lw.onWatch = (o) => events([], o, "close");
  const r2 = await run({ budgetMs: 2_500 });
  assert.equal(r2.complete, false);
  assert.equal(r2.saved?.written, "pages");

  // run 3: cm-00001 changed at 70; the watch from 50 sees it: complete at 70
  const changed = cm("cm-00001", "70", { i: "NEW" });
  setServer("70", many.map((o) => o.metadata.name === "cm-00001" ? changed : o));
  lw.onWatch = (o) => events([ev("MODIFIED", changed)], o);
  const r3 = await run({ budgetMs: 20_000 });
  assert.equal(r3.complete, true);
  assert.equal(r3.resourceVersion, "70");
  assert.equal(r3.saved?.written, "log");
  const stored = await loadCheckpoint(storage, "k", identity, { partial: true });
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
