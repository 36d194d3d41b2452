import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { test } from "../_test.ts";
import { withIdleDeadline } from "../../src/reflector/_idle_deadline.ts";
import { ManualClock } from "../../testkit.ts";

/** The engine's collector, exposed at run time (Deno and Node both take the flag). */
function collector(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

test("a long watch does not keep the events it delivered: withIdleDeadline holds nothing per step", async () => {
  const gc = collector();
  const clock = new ManualClock();
  const controller = new AbortController();
  let release = () => {};
  async function* events() {
    for (let i = 0; i < 200; i++) yield { i, payload: new Array(1000).fill(i) };
    await new Promise<void>((r) => (release = r)); // open and quiet, as a watch is
  }
  const refs: WeakRef<object>[] = [];
  const it = withIdleDeadline(events(), () => 60_000, clock, controller)[Symbol.asyncIterator]();
  for (let i = 0; i < 200; i++) {
    const r = await it.next();
    refs.push(new WeakRef(r.value as object));
  }
  const waiting = it.next(); // the wrapper now waits on the quiet stream
  for (let k = 0; k < 3; k++) {
    await new Promise((r) => setTimeout(r, 0));
    gc();
  }
  const kept = refs.filter((r) => r.deref() !== undefined).length;
  controller.abort(new Error("done"));
  release();
  await waiting.catch(() => {});
  await it.return?.(undefined);
  assert.ok(kept <= 1, `${kept} of 200 delivered events still held`);
});
