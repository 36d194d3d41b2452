/**
 * catchUp's rules on injected time: a scripted lister-watcher and a
 * ManualClock, so every wait is exact and no test sleeps.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { cm, ev, events, ScriptedListerWatcher, untilAborted } from "./_scripted_lister_watcher.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { CatchUpBudgetError } from "../../src/reflector/catch_up_budget_error.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { UnexpectedKindError, WatchIdleTimeoutError } from "../../src/api/errors.ts";
import { RequestRefusedError } from "../../src/api/request_refused_error.ts";
import type { KubeObject, WatchEvent } from "../../src/api/types.ts";
import type { WatchOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };
const bookmark = (rv: string) =>
  ({
    type: "BOOKMARK",
    object: { kind: "ConfigMap", metadata: { resourceVersion: rv } },
  }) as WatchEvent;

/** A scripted server at version 10 with a and b, a checkpoint at `checkpointRv` holding `saved`. */
async function setup(checkpointRv = "8", saved: KubeObject[] = [cm("a", "5"), cm("b", "6")]) {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("a", "5"), cm("b", "6")];
  lw.resourceVersion = "10";
  const storage = memoryCheckpointStorage();
  if (checkpointRv) {
    await saveCheckpoint(storage, "k", { identity, resourceVersion: checkpointRv, items: saved });
  }
  const errors: Array<{ error: unknown; phase: string; at: number }> = [];
  const run = (options: Partial<CatchUpOptions> = {}) => {
    let result: CatchUpResult | undefined;
    let failure: unknown;
    let settled = false;
    const promise = catchUp(lw, {
      storage,
      key: "k",
      identity,
      clock,
      random: () => 0,
      onError: (error, phase) => errors.push({ error, phase, at: clock.now() }),
      ...options,
    }).then((r) => (result = r), (e) => (failure = e)).finally(() => (settled = true));
    return {
      promise,
      get result() {
        return result;
      },
      get failure() {
        return failure;
      },
      get settled() {
        return settled;
      },
    };
  };
  return { clock, lw, storage, errors, run };
}

/** A watch whose events are `list`, then a clean close after `ms` of fake time. */
function closingAfter(clock: ManualClock, ms: number, list: WatchEvent[] = []) {
  return async function* (o: WatchOptions): AsyncGenerator<WatchEvent> {
    o.onConnected?.();
    for (const e of list) yield e;
    await new Promise<void>((resolve) => {
      const h = clock.setTimeout(resolve, ms);
      o.signal?.addEventListener("abort", () => {
        clock.clearTimeout(h);
        resolve();
      }, { once: true });
    });
  };
}

test("catchUp: a checkpoint newer than the server (etcd restored from a backup) is not proof: it lists, reports why, and returns the difference", async () => {
  const t = await setup("50", [cm("a", "45"), cm("gone", "48")]);
  const r = t.run();
  await t.clock.advance(0);
  await r.promise;
  assert.equal(r.result?.listed, "ahead-of-server");
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.resourceVersion, "10");
  const refusal = t.errors.find((e) => e.error instanceof CheckpointError);
  assert.equal((refusal?.error as CheckpointError).reason, "ahead-of-server");
  assert.deepEqual(r.result?.changes.map((c) => `${c.type} ${c.key}`).sort(), [
    "add ns/b",
    "delete ns/gone",
    "update ns/a",
  ]);
  assert.equal(t.lw.of("watch").length, 0, "no watch from a version the server never had");
});

test("catchUp: when the budget runs out during the deciding list, it returns complete: false and saves what was applied", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) => closingAfter(t.clock, 3_000)(o); // no bookmark: no proof
  t.lw.onList = (o) =>
    o.limit === 1
      ? { metadata: { resourceVersion: "10" }, items: [] }
      : untilAborted(o.signal).then(() => Promise.reject(o.signal?.reason));
  const r = t.run({ budgetMs: 5_000 });
  await t.clock.advance(4_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(r.failure, undefined, String(r.failure));
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "8");
  assert.equal(r.result?.saved?.count, 2);
  assert.equal((await loadCheckpoint(t.storage, "k", identity))?.resourceVersion, "8");
});

test("catchUp: a watch that fails at the checkpoint's version every time (an ERROR event) relists after the backoff, as the reflector does", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) =>
    events([{ type: "ERROR", object: { kind: "Status", code: 500 } } as unknown as WatchEvent], o);
  const r = t.run();
  await t.clock.advance(0);
  assert.equal(
    t.lw.of("list").filter((c) => (c.options as { limit?: number }).limit !== 1).length,
    0,
    "not at once",
  );
  await t.clock.advance(800); // the backoff's first step (jitter 0)
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, "watch-failed");
  assert.equal(t.lw.of("watch").length, 1, "never watched again from the poisoned version");
});

test("catchUp: a watch refused for good (403) is reported naming the verb and resource, and relisted, never rewatched", async () => {
  const t = await setup("8");
  t.lw.onWatch = () => {
    throw new KubeStatusError({ code: 403, request: "GET /api/v1/namespaces/ns/configmaps" });
  };
  const r = t.run();
  await t.clock.advance(800);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, "watch-failed");
  const refusal = t.errors.find((e) => e.error instanceof RequestRefusedError);
  assert.match(
    String((refusal?.error as Error).message),
    /^forbidden: cannot watch configmaps in namespace ns/,
  );
  assert.equal(t.lw.of("watch").length, 1);
});

test("catchUp: a 429 with Retry-After on the watch waits what the server asked, then watches again (no list)", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o, n) => {
    if (n === 0) throw new KubeStatusError({ code: 429, retryAfterMs: 4_000 });
    return events([bookmark("10")], o);
  };
  const r = t.run();
  await t.clock.advance(3_999);
  assert.equal(t.lw.of("watch").length, 1);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(t.lw.of("watch").length, 2);
  assert.equal(t.lw.of("watch")[1].rv, "8");
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, undefined);
});

test("catchUp: a target list answered 503 is retried after the backoff with Retry-After honoured", async () => {
  const t = await setup("8");
  let n = 0;
  t.lw.onList = () => {
    if (n++ === 0) throw new KubeStatusError({ code: 503, retryAfterMs: 2_000 });
    return { metadata: { resourceVersion: "10" }, items: [] };
  };
  t.lw.onWatch = (o) => events([bookmark("10")], o);
  const r = t.run();
  await t.clock.advance(1_999);
  assert.equal(t.lw.of("list").length, 1);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(t.lw.of("list").length, 2);
  assert.equal(r.result?.complete, true);
});

test("catchUp: without a bookmark, a target read again that has moved on lets a second watch prove it (no list)", async () => {
  const t = await setup("8");
  let target = 0;
  t.lw.onList = (o) => {
    assert.equal(o.limit, 1, "no full list");
    return { metadata: { resourceVersion: target++ === 0 ? "10" : "12" }, items: [] };
  };
  t.lw.onWatch = (o, n) => n === 0 ? closingAfter(t.clock, 3_000)(o) : events([bookmark("12")], o);
  const r = t.run();
  await t.clock.advance(3_000);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, undefined);
  assert.equal(r.result?.resourceVersion, "12");
  assert.equal(t.lw.of("watch").length, 2);
  assert.equal(t.lw.of("watch")[1].rv, "8");
});

test("catchUp: a watch that brings the events up to the target proves it at once", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) => events([ev("MODIFIED", cm("a", "9")), ev("ADDED", cm("c", "10"))], o);
  const r = t.run();
  await t.clock.advance(0);
  await r.promise;
  assert.deepEqual(r.result?.changes.map((c) => `${c.type} ${c.key}`), ["update ns/a", "add ns/c"]);
  assert.equal(r.result?.complete, true);
});

/** A storage whose chosen methods never answer (and ignore their signal), the rest in memory. */
function hanging(inner: CheckpointStorage, methods: Array<"get" | "put">): CheckpointStorage {
  const never = () => new Promise<never>(() => {});
  return {
    get: methods.includes("get") ? never : (k, o) => inner.get(k, o),
    put: methods.includes("put") ? never : (k, d, o) => inner.put(k, d, o),
    delete: (k, o) => inner.delete(k, o),
  };
}

test("catchUp: a storage whose get never answers is bounded by the budget: CatchUpBudgetError at budgetMs, nothing saved", async () => {
  const t = await setup("8");
  const r = t.run({ storage: hanging(t.storage, ["get"]), budgetMs: 2_000 });
  await t.clock.advance(1_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.ok(r.failure instanceof CatchUpBudgetError, String(r.failure));
  assert.match((r.failure as Error).message, /before the checkpoint was read/);
});

test("catchUp: a storage whose put never answers ends after saveTimeoutMs with the failure in the result", async () => {
  const t = await setup("8");
  // a change, so that the save writes
  t.lw.onWatch = (o) => events([ev("MODIFIED", cm("b", "9", { v: "2" })), bookmark("10")], o);
  const r = t.run({ storage: hanging(t.storage, ["put"]), saveTimeoutMs: 1_000 });
  await t.clock.advance(999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.saved, undefined);
  assert.match(String((r.result?.saveError as Error).message), /took over 1000 ms/);
  assert.ok(t.errors.some((e) => e.phase === "checkpoint"));
});

test("catchUp: an abort while the storage hangs rejects at once with the signal's reason", async () => {
  const t = await setup("8");
  const ac = new AbortController();
  const r = t.run({ storage: hanging(t.storage, ["get"]), signal: ac.signal });
  await t.clock.advance(10);
  const reason = new Error("stop");
  ac.abort(reason);
  await t.clock.flush();
  await r.promise;
  assert.equal(r.failure, reason);
});

test("catchUp: a malformed watch event is never skipped: relisted after the backoff", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) => events([{ type: "ADDED", object: null } as unknown as WatchEvent], o);
  const r = t.run();
  await t.clock.advance(800);
  await r.promise;
  assert.equal(r.result?.listed, "watch-failed");
  assert.equal(r.result?.complete, true);
});

test("catchUp: a checkpoint already at the target is complete with no watch and no list (nothing happened since)", async () => {
  const t = await setup("10");
  const r = t.run();
  await t.clock.advance(0);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, undefined);
  assert.deepEqual(r.result?.changes, []);
  assert.equal(t.lw.of("watch").length, 0);
  assert.equal(t.lw.of("list").length, 1, "the limit=1 target read only");
});

test("catchUp: when the budget runs out while the target is read again, what the watch applied is kept and saved (complete: false)", async () => {
  const t = await setup("8");
  let reads = 0;
  t.lw.onList = (o) =>
    reads++ === 0
      ? { metadata: { resourceVersion: "10" }, items: [] }
      : untilAborted(o.signal).then(() => Promise.reject(o.signal?.reason));
  t.lw.onWatch = (o) => closingAfter(t.clock, 3_000, [ev("ADDED", cm("c", "9"))])(o);
  const r = t.run({ budgetMs: 5_000 });
  await t.clock.advance(5_000);
  await r.promise;
  assert.equal(r.failure, undefined, String(r.failure));
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "9");
  assert.deepEqual(r.result?.changes.map((c) => `${c.type} ${c.key}`), ["add ns/c"]);
  assert.equal(r.result?.saved?.count, 3);
});

test("catchUp: a server whose versions are not integers is proven by one consistent list (complete: true)", async () => {
  const t = await setup("");
  t.lw.resourceVersion = "abc";
  const r = t.run();
  await t.clock.advance(0);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.resourceVersion, "abc");
  assert.equal(r.result?.objects.size, 2);
});

test("catchUp: watches that close at once with nothing (a proxy cutting them) fall back to one list, not a budget of retries", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) => events([], o, "close");
  const r = t.run({ budgetMs: 10_000 });
  await t.clock.advance(0);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, "no-proof");
  assert.equal(t.lw.of("watch").length, 1);
});

test("catchUp: bookmarks that stay below the target (another resource moved the cluster's version) fall back to the list", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o) => closingAfter(t.clock, 3_000, [bookmark("9")])(o);
  const r = t.run({ budgetMs: 10_000 });
  await t.clock.advance(3_000);
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, "no-proof");
});

test("catchUp: an object without a name (in a watch event or a list) is reported and left out; the run goes on and completes", async () => {
  const t = await setup("8");
  const nameless = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { namespace: "ns", resourceVersion: "9" },
  } as KubeObject;
  t.lw.onWatch = (o) => events([ev("ADDED", nameless), ev("ADDED", cm("c", "10"))], o);
  const r = t.run();
  await t.clock.advance(0);
  await r.promise;
  assert.equal(r.failure, undefined, String(r.failure));
  assert.equal(r.result?.complete, true);
  assert.deepEqual(r.result?.changes.map((c) => `${c.type} ${c.key}`), ["add ns/c"]);
  assert.ok(t.errors.some((e) => e.phase === "store"));
});

test("catchUp: a list that ignores its signal cannot hold it past its budget", async () => {
  const t = await setup("");
  t.lw.onList = (o) =>
    o.limit === 1 ? { metadata: { resourceVersion: "10" }, items: [] } : new Promise(() => {});
  const r = t.run({ budgetMs: 5_000 });
  await t.clock.advance(5_000);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "");
  assert.equal(r.result?.saved, undefined, "nothing consistent to save");
});

test("catchUp: a distrusted checkpoint (ahead of the server) is not returned as the current objects when the budget runs out before the list", async () => {
  const t = await setup("50", [cm("x", "45")]);
  t.lw.onList = (o) =>
    o.limit === 1 ? { metadata: { resourceVersion: "10" }, items: [] } : new Promise(() => {});
  const r = t.run({ budgetMs: 2_000 });
  await t.clock.advance(2_000);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.objects.size, 0);
  assert.equal(r.result?.saved, undefined);
  assert.equal(
    (await loadCheckpoint(t.storage, "k", identity))?.resourceVersion,
    "50",
    "left as it was",
  );
});

test("catchUp: a watch that goes silent (half-open) is cut after its timeout + 2 s, reported, and watched again within the budget", async () => {
  const t = await setup("8");
  t.lw.onWatch = (o, n) => n === 0 ? events([], o) : events([bookmark("10")], o);
  const r = t.run({ budgetMs: 10_000 });
  await t.clock.advance(4_999);
  assert.equal(t.lw.of("watch").length, 1);
  await t.clock.advance(1 + 2_000); // the deadline, then the reconnect backoff (jitter 0: 800 ms)
  await r.promise;
  assert.equal(r.result?.complete, true);
  assert.equal(t.lw.of("watch").length, 2);
  assert.ok(t.errors.some((e) => e.error instanceof WatchIdleTimeoutError));
});

test("catchUp with expectedKind: an object of another kind is reported and left out, never returned or saved", async () => {
  const t = await setup("8");
  const secret = { ...cm("s", "9"), kind: "Secret" };
  t.lw.onWatch = (o) => events([ev("ADDED", secret), ev("ADDED", cm("c", "10"))], o);
  const r = t.run({ expectedKind: "ConfigMap" });
  await t.clock.advance(0);
  await r.promise;
  assert.deepEqual([...r.result!.objects.keys()].sort(), ["ns/a", "ns/b", "ns/c"]);
  assert.ok(t.errors.some((e) => e.error instanceof UnexpectedKindError));
  const saved = await loadCheckpoint(t.storage, "k", identity);
  assert.ok(!saved?.items.some((i) => i.kind === "Secret"));
});

test("catchUp with expectedKind: a target read answered with a list of another kind is not taken for the target (reported, read again)", async () => {
  const t = await setup("8");
  let reads = 0;
  t.lw.onList = () =>
    reads++ === 0
      ? { kind: "SecretList", metadata: { resourceVersion: "99" }, items: [] }
      : { kind: "ConfigMapList", metadata: { resourceVersion: "10" }, items: [] };
  t.lw.onWatch = (o) => events([bookmark("10")], o);
  const r = t.run({ expectedKind: "ConfigMap" });
  await t.clock.advance(800);
  await r.promise;
  assert.equal(r.result?.target, "10");
  assert.equal(r.result?.complete, true);
  assert.ok(t.errors.some((e) => e.error instanceof UnexpectedKindError));
});
