import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import type { Store } from "../../src/cache/store.ts";
import { Reflector } from "../../src/reflector/reflector.ts";
import { ManualClock } from "../../testkit.ts";
import { cm, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";

/** The engine's collector, exposed at run time (Deno and Node both take the flag). */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

/** A store that keeps nothing: whatever still holds a listed object is the reflector. */
class CountingStore implements Store<KubeObject> {
  refs: WeakRef<object>[] = [];
  add(): void {}
  update(): void {}
  delete(): void {}
  list(): KubeObject[] {
    return [];
  }
  listKeys(): string[] {
    return [];
  }
  get(): undefined {
    return undefined;
  }
  getByKey(): undefined {
    return undefined;
  }
  replace(items: KubeObject[]): void {
    this.refs = [new WeakRef(items), ...items.map((item) => new WeakRef(item))];
  }
  resync(): void {}
}

test("a reflector whose watch waits after a list keeps neither the listed objects nor their array", async () => {
  const gc = collector();
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.onList = () => ({
    metadata: { resourceVersion: "10" },
    items: Array.from({ length: 100 }, (_, i) => cm(`cm-${i}`, "5")),
  });
  const store = new CountingStore();
  const reflector = new Reflector(lw, store, { useStreamingList: false, clock });
  const controller = new AbortController();
  const running = reflector.run({ signal: controller.signal });
  await reflector.synced;
  // the watch is open and quiet, as most are
  while (!lw.calls.some((c) => c.verb === "watch")) await new Promise((r) => setTimeout(r, 0));
  for (let k = 0; k < 3; k++) {
    await new Promise((r) => setTimeout(r, 0));
    gc();
  }
  const kept = store.refs.filter((r) => r.deref() !== undefined).length;
  controller.abort(new Error("done"));
  await running;
  assert.equal(store.refs.length, 101);
  assert.equal(kept, 0, `${kept} of 101 (the array and its 100 objects) still held while watching`);
});
