import { unhandledRejections } from "../_unhandled_rejections.ts";
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import { FakeListerWatcher, FAST, obj } from "./_fake_lister_watcher.ts";

function factoryOf(lws: FakeListerWatcher[]): SharedInformerFactory {
  return new SharedInformerFactory({
    listerWatcher: () => {
      const lw = new FakeListerWatcher([obj("a")]);
      lws.push(lw);
      return lw;
    },
    defaults: { ...FAST, onError: () => {} },
  });
}

test("factory start() a second time neither throws nor leaves an unhandled rejection, and starts nothing twice", async () => {
  const lws: FakeListerWatcher[] = [];
  const factory = factoryOf(lws);
  const ac = new AbortController();
  let done: Promise<void> | undefined;
  let again: Promise<void>[] = [];
  let synced = false;
  const { rejections } = await unhandledRejections(async () => {
    factory.informerFor({ apiVersion: "v1", resource: "configmaps" });
    done = factory.start({ signal: ac.signal });
    factory.informerFor({ apiVersion: "v1", resource: "secrets" }); // starts on its own
    // as client-go users do after adding informers: neither awaited nor caught
    again = [
      factory.start({ signal: ac.signal }),
      factory.start({ signal: new AbortController().signal }),
    ];
    synced = await factory.waitForCacheSync(AbortSignal.timeout(10_000));
  });
  assert.deepEqual(rejections, []);
  assert.ok(synced);
  assert.ok(again.every((p) => p === done), "a later start() returns the first one's promise");
  assert.deepEqual(lws.map((lw) => [lw.lists, lw.liveWatches]), [[1, 1], [1, 1]]);
  ac.abort();
  await done;
  assert.deepEqual(lws.map((lw) => lw.liveWatches), [0, 0]);
  assert.ok(factory.informers.every((i) => i.status.state === "stopped"));
});

test("factory start() after its signal aborted resolves and starts nothing", async () => {
  const lws: FakeListerWatcher[] = [];
  const factory = factoryOf(lws);
  factory.informerFor({ apiVersion: "v1", resource: "configmaps" });
  const ac = new AbortController();
  const done = factory.start({ signal: ac.signal });
  assert.equal(await factory.waitForCacheSync(AbortSignal.timeout(10_000)), true);
  ac.abort();
  await done;
  const { rejections } = await unhandledRejections(async () => {
    await factory.start({ signal: new AbortController().signal });
  });
  assert.deepEqual(rejections, []);
  assert.deepEqual(lws.map((lw) => [lw.lists, lw.liveWatches]), [[1, 0]]);
});

test("factory start() without a signal rejects with a TypeError", async () => {
  const factory = factoryOf([]);
  await assert.rejects(
    // deno-lint-ignore no-explicit-any
    factory.start({} as any),
    /^TypeError: SharedInformerFactory.start: options.signal is required$/,
  );
});
