import assert from "node:assert/strict";
import process from "node:process";
import { test } from "../_test.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import { FakeListerWatcher, FAST, obj } from "./_fake_lister_watcher.ts";

/**
 * Records the unhandled rejections of `fn` (and of a macrotask after it),
 * on either runtime: Deno's `unhandledrejection` event on `globalThis`
 * (cancelled, so the test reports it rather than dying), Node's
 * `unhandledRejection` process event.
 */
async function unhandledRejections(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const g = globalThis as unknown as {
    addEventListener?: (type: string, fn: (e: PromiseRejectionEvent) => void) => void;
    removeEventListener?: (type: string, fn: (e: PromiseRejectionEvent) => void) => void;
  };
  const onEvent = (e: PromiseRejectionEvent) => {
    e.preventDefault();
    seen.push(e.reason);
  };
  const onProcess = (reason: unknown) => void seen.push(reason);
  const web = typeof g.addEventListener === "function";
  if (web) g.addEventListener!("unhandledrejection", onEvent);
  else process.on("unhandledRejection", onProcess);
  try {
    await fn();
    // Both runtimes report an unhandled rejection once the microtasks have run.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await new Promise((resolve) => setTimeout(resolve, 0));
  } finally {
    if (web) g.removeEventListener!("unhandledrejection", onEvent);
    else process.off("unhandledRejection", onProcess);
  }
  return seen;
}

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
  const rejections = await unhandledRejections(async () => {
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
  const rejections = await unhandledRejections(async () => {
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
