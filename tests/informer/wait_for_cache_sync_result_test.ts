import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import type { KubeList } from "../../src/api/types.ts";
import { Informer } from "../../src/informer/informer.ts";
import { SharedInformerFactory } from "../../src/informer/shared_informer_factory.ts";
import {
  type Syncable,
  waitForCacheSync,
  waitForCacheSyncResult,
} from "../../src/informer/wait_for_cache_sync.ts";
import type { ListOptions } from "../../src/transport/lister_watcher.ts";
import { FakeListerWatcher, FAST, obj, until } from "./_fake_lister_watcher.ts";

class Forbidden extends FakeListerWatcher {
  override list(_options: ListOptions): Promise<KubeList> {
    this.lists++;
    return Promise.reject(
      new KubeStatusError({ code: 403, status: { reason: "Forbidden", code: 403, message: "no" } }),
    );
  }
}

test("factory waitForCacheSyncResult names the informers not synced and their last errors", async () => {
  const factory = new SharedInformerFactory({
    listerWatcher: (r) =>
      r.resource === "secrets" ? new Forbidden() : new FakeListerWatcher([obj("a")]),
    defaults: { ...FAST, onError: () => {} },
  });
  factory.informerFor({ apiVersion: "v1", resource: "configmaps" });
  const secrets = factory.informerFor({ apiVersion: "v1", resource: "secrets", namespace: "prod" });
  const ac = new AbortController();
  const done = factory.start({ signal: ac.signal });
  try {
    await until(() => secrets.status.lastError !== undefined, "the forbidden list");
    const result = await factory.waitForCacheSyncResult(AbortSignal.abort());
    assert.equal(result.synced, false);
    assert.equal(result.notSynced.length, 1);
    const [entry] = result.notSynced;
    assert.equal(entry.name, "secrets.prod");
    assert.equal(entry.stopped, false);
    assert.equal(entry.lastError?.phase, "list");
    assert.equal((entry.lastError?.error as KubeStatusError).code, 403);
    assert.equal(result.message, "not synced: secrets.prod (list: 403 Forbidden: no)");
    assert.equal(
      await factory.waitForCacheSync(AbortSignal.abort()),
      false,
      "the boolean form stays",
    );
  } finally {
    ac.abort();
    await done;
  }
});

test("waitForCacheSyncResult: synced, unnamed syncables, and one that stopped", async () => {
  const informer = new Informer(new FakeListerWatcher([obj("a")]), { ...FAST, name: "cms" });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  assert.deepEqual(await waitForCacheSyncResult(AbortSignal.timeout(3000), informer), {
    synced: true,
    notSynced: [],
    message: "synced",
  });
  ac.abort();
  await done;
  let reject!: (err: Error) => void;
  const stopping: Syncable = {
    hasSynced: () => false,
    waitForSync: () => new Promise((_, r) => (reject = r)),
  };
  const never: Syncable = {
    hasSynced: () => false,
    waitForSync: ({ signal }) =>
      new Promise((_, r) =>
        signal?.addEventListener("abort", () => r(signal.reason), { once: true })
      ),
  };
  const pending = waitForCacheSyncResult(new AbortController().signal, informer, never, stopping);
  await Promise.resolve();
  reject(new Error("removed"));
  const result = await pending;
  assert.equal(result.synced, false);
  assert.deepEqual(result.notSynced, [
    { name: "#1", stopped: false },
    { name: "#2", stopped: true },
  ]);
  assert.equal(result.message, "not synced: #1 (no error yet), #2 (stopped, no error yet)");
  assert.equal(await waitForCacheSync(AbortSignal.abort(), never), false);
  await assert.rejects(waitForCacheSyncResult(undefined as never), TypeError);
});
