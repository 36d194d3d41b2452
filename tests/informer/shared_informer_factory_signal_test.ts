import assert from "node:assert/strict";
import process from "node:process";
import { test } from "../_test.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import { FakeListerWatcher, FAST, obj } from "./_fake_lister_watcher.ts";

/** Counts the abort listeners registered on `signal` right now, and the most ever at once. */
function countListeners(signal: AbortSignal): { now: number; max: number } {
  const count = { now: 0, max: 0 };
  const live = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  Object.defineProperty(signal, "addEventListener", {
    value: (type: string, fn: EventListener, opts?: AddEventListenerOptions) => {
      if (type === "abort" && !live.has(fn)) {
        live.add(fn);
        count.now++;
        count.max = Math.max(count.max, count.now);
      }
      return add(type, fn, opts);
    },
  });
  Object.defineProperty(signal, "removeEventListener", {
    value: (type: string, fn: EventListener, opts?: EventListenerOptions) => {
      if (type === "abort" && live.delete(fn)) count.now--;
      return remove(type, fn, opts);
    },
  });
  return count;
}

test("factory start adds one listener to the caller's signal for 200 informers, no warning, and abort stops them all", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  const lws: FakeListerWatcher[] = [];
  const factory = new SharedInformerFactory({
    listerWatcher: () => {
      const lw = new FakeListerWatcher([obj("a")]);
      lws.push(lw);
      return lw;
    },
    defaults: { ...FAST, onError: () => {} },
  });
  try {
    for (let i = 0; i < 150; i++) {
      factory.informerFor({ apiVersion: "v1", resource: "configmaps", namespace: `ns-${i}` });
    }
    const ac = new AbortController();
    const listeners = countListeners(ac.signal);
    const done = factory.start({ signal: ac.signal });
    for (let i = 150; i < 200; i++) { // also those asked for after start()
      factory.informerFor({ apiVersion: "v1", resource: "configmaps", namespace: `ns-${i}` });
    }
    const waitAc = new AbortController();
    const waitListeners = countListeners(waitAc.signal);
    assert.equal(await factory.waitForCacheSync(waitAc.signal), true);
    assert.equal(factory.informers.length, 200);
    assert.ok(lws.every((lw) => lw.liveWatches === 1), "every informer watches");
    assert.equal(listeners.max, 1, "one listener on the start() signal");
    assert.equal(waitListeners.max, 1, "one listener on the waitForCacheSync() signal");
    assert.equal(waitListeners.now, 0, "and none left behind");
    ac.abort();
    await done;
    assert.ok(lws.every((lw) => lw.liveWatches === 0), "abort stopped every watch");
    assert.ok(factory.informers.every((i) => i.status.state === "stopped"));
    await new Promise((resolve) => setTimeout(resolve, 0)); // warnings are emitted on a later tick
    assert.deepEqual(warnings.filter((w) => /MaxListeners/.test(w)), []);
  } finally {
    process.off("warning", onWarning);
  }
});

test("factory informers asked for after the signal aborted never run", async () => {
  const lws: FakeListerWatcher[] = [];
  const factory = new SharedInformerFactory({
    listerWatcher: () => {
      const lw = new FakeListerWatcher([obj("a")]);
      lws.push(lw);
      return lw;
    },
    defaults: { ...FAST, onError: () => {} },
  });
  const ac = new AbortController();
  ac.abort();
  await factory.start({ signal: ac.signal });
  factory.informerFor({ apiVersion: "v1", resource: "pods" });
  assert.equal(await factory.waitForCacheSync(AbortSignal.abort()), false);
  assert.equal(lws[0].lists, 0);
});
