/**
 * A hostile API server against `catchUp`: the attacks of the Reflector's
 * hostile suite (hostile_server_test.ts), made on real HTTP against a
 * catch-up from a checkpoint that a good run saved in a real storage. For
 * each, `catchUp` rejects only with a typed error (a CatchUpBudgetError, or
 * the abort's reason), leaves no unhandled rejection, reports the attack to
 * `onError` with a typed error, makes no more requests than the backoff
 * allows within its budget, claims `complete` only with exactly the
 * server's objects at or past the target, and saves exactly what it
 * returned (or nothing). Once the server behaves again, a run is complete
 * with objects = server. The attacks whose point is a wait run on a
 * ManualClock with a scripted lister-watcher: exact times, no sleep.
 *
 * Real-HTTP runs use small budgets and assert no wall-clock duration: a
 * slower machine only makes fewer requests.
 *
 * @module
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { eventually } from "../_harness.ts";
import {
  assertHonest,
  type Checkpointed,
  KEY,
  NS,
  type Outcome,
  versions,
  withCheckpointedServer,
} from "./_catch_up_hostile_harness.ts";
import { BAD_LISTS, enc, isStatusError, NO_WATCH, POISON } from "./_catch_up_hostile_attacks.ts";
import { cm, ev, events, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";
import { startHttpServer } from "../transport/_http_server.ts";
import {
  KubeNetworkError,
  ShortWatchError,
  UnexpectedKindError,
  WatchIdleTimeoutError,
} from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import type { WatchEvent } from "../../src/api/types.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import { CatchUpBudgetError } from "../../src/reflector/catch_up_budget_error.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import type { WatchOptions } from "../../src/transport/lister_watcher.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { type Fault, ManualClock } from "../../testkit.ts";

/** Requests one run may make: the identity and two target reads, then a watch and a relist per attempt. */
const BOUND = { fixed: 3, perAttempt: 2 };

/** The full lists (not the `limit=1` target reads) a run made. */
const fullLists = (out: Outcome) =>
  out.requests.filter((r) => r.verb === "list" && r.query.get("limit") !== "1");
const watches = (out: Outcome) => out.requests.filter((r) => r.verb === "watch");
const changes = (r: CatchUpResult) => r.changes.map((c) => `${c.type} ${c.key}`);

/** Every reported error satisfies `expected`, in `phase`, and there is at least one. */
function assertReported(
  out: Outcome,
  phase: string,
  expected: (e: unknown) => boolean,
  what: string,
): void {
  const ofPhase = out.errors.filter((e) => e.phase === phase);
  assert.ok(ofPhase.length >= 1, `${what}: reported to onError (${phase})`);
  assert.ok(
    ofPhase.every((e) => expected(e.error)),
    `${what}: every ${phase} error is the expected one: ${
      ofPhase.map((e) => String(e.error)).join("; ")
    }`,
  );
}

/** The server healed: a run is complete with objects = server, from the checkpoint left behind. */
async function assertHealed(h: Checkpointed): Promise<CatchUpResult> {
  h.server.clearFaults();
  const before = (await h.stored())!;
  const out = await h.run({ budgetMs: 2_000 });
  await assertHonest(h, before, out, BOUND);
  assert.equal(out.failure, undefined, String(out.failure));
  assert.equal(out.result?.complete, true, "healed: complete");
  assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects(), "healed: = server");
  assert.deepEqual(out.errors, [], "healed: nothing to report");
  return out.result!;
}

// ---------------------------------------------------------------------------
// Poison on the watch: relist after the backoff, complete, objects = server
// ---------------------------------------------------------------------------

for (const { name, fault, everyWatch, expected, storage } of POISON) {
  const where = everyWatch ? "every watch" : "every watch from the checkpoint's version";
  test(`catchUp (${storage ?? "memory"} storage): ${name} on ${where}: reported, relisted once from the checkpoint's version after the backoff, complete with objects = server, saved as returned`, async () => {
    await withCheckpointedServer({ storage, maxEventLength: 4_096 }, async (h) => {
      const before = h.checkpoint;
      const rule = h.server.inject({
        verb: "watch",
        resource: "configmaps",
        resourceVersion: everyWatch ? undefined : before.resourceVersion,
        times: Infinity,
        fault,
      });
      const out = await h.run();
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.failure, undefined, String(out.failure));
      assertReported(out, "watch", expected, name);
      const r = out.result!;
      assert.equal(r.complete, true);
      assert.equal(r.listed, "watch-failed");
      assert.deepEqual(versions(r.objects.values()), h.serverObjects());
      assert.deepEqual(changes(r), ["update fx/cm-0"], "the difference, once");
      assert.equal(rule.fired, 1, "never watched from the poisoned version again");
      const lists = fullLists(out);
      assert.equal(lists.length, 1, "one relist");
      assert.equal(lists[0].query.get("resourceVersion"), before.resourceVersion);
      assert.ok(r.saved, "saved");
      await assertHealed(h);
    });
  });
}

test("catchUp: an ERROR event with a 410 Status on the watch from the checkpoint: relisted at once, complete, listed expired", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      resourceVersion: before.resourceVersion,
      times: Infinity,
      fault: { kind: "error-event", code: 410 },
    });
    const out = await h.run();
    await assertHonest(h, before, out, BOUND);
    assertReported(out, "watch", isStatusError(410), "ERROR 410");
    assert.equal(out.result?.complete, true);
    assert.equal(out.result?.listed, "expired");
    assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
    await assertHealed(h);
  });
});

// ---------------------------------------------------------------------------
// Watches that never serve: rewatched from the checkpoint, never relisted
// ---------------------------------------------------------------------------

for (const { name, fault, expected, check, storage } of NO_WATCH) {
  test(`catchUp (${storage ?? "memory"} storage): ${name} on every watch: reported, rewatched from the checkpoint's version after the backoff (no relist), at the budget complete: false with the checkpoint's objects saved as they were; healed, complete`, async () => {
    await withCheckpointedServer({ storage }, async (h) => {
      const before = h.checkpoint;
      h.server.inject({ verb: "watch", resource: "configmaps", times: Infinity, fault });
      const out = await h.run({ budgetMs: 2_000 });
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.failure, undefined, String(out.failure));
      assertReported(out, "watch", expected, name);
      check?.(out.errors.map((e) => e.error));
      const r = out.result!;
      assert.equal(r.complete, false);
      assert.equal(r.resourceVersion, before.resourceVersion);
      assert.deepEqual(versions(r.objects.values()), before.objects);
      assert.deepEqual(r.changes, []);
      assert.ok(r.saved, "what was applied (the checkpoint's state) is saved");
      assert.equal(fullLists(out).length, 0, "no relist");
      assert.ok(watches(out).length >= 2, "rewatched");
      assert.ok(
        watches(out).every((w) => w.query.get("resourceVersion") === before.resourceVersion),
      );
      const healed = await assertHealed(h);
      assert.equal(healed.listed, undefined, "healed: from the checkpoint, no list");
      assert.deepEqual(changes(healed), ["update fx/cm-0"]);
    });
  });
}

test("catchUp (file storage): every watch ends at once with nothing (a short watch): reported, no proof, so one consistent list after at most two watches: complete, objects = server, saved as returned", async () => {
  await withCheckpointedServer({ storage: "file" }, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      times: Infinity,
      fault: { kind: "close" },
    });
    const out = await h.run({ budgetMs: 2_000 });
    await assertHonest(h, before, out, BOUND);
    assert.equal(out.failure, undefined, String(out.failure));
    assertReported(out, "watch", (e) => e instanceof ShortWatchError, "a short watch");
    const r = out.result!;
    assert.equal(r.complete, true);
    assert.equal(r.listed, "no-proof");
    assert.deepEqual(versions(r.objects.values()), h.serverObjects());
    assert.deepEqual(changes(r), ["update fx/cm-0"]);
    assert.ok(watches(out).length <= 2, `${watches(out).length} watches`);
    assert.equal(fullLists(out).length, 1);
    await assertHealed(h);
  });
});

for (const fault of [{ kind: "status", code: 503, body: "html" }, { kind: "reset" }] as Fault[]) {
  test(`catchUp: one ${fault.kind === "reset" ? "reset" : "503 HTML"} answer to the watch: reported, rewatched after the backoff, complete in the same run without a list`, async () => {
    await withCheckpointedServer({}, async (h) => {
      const before = h.checkpoint;
      h.server.inject({ verb: "watch", resource: "configmaps", times: 1, fault });
      const out = await h.run({ budgetMs: 2_000 });
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.errors.length, 1, out.errors.map((e) => String(e.error)).join("; "));
      assert.equal(out.result?.complete, true);
      assert.equal(out.result?.listed, undefined);
      assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
      assert.equal(watches(out).length, 2);
    });
  });
}

// ---------------------------------------------------------------------------
// The target read (a `limit=1` list) answered with garbage
// ---------------------------------------------------------------------------

for (const { name, fault, expected } of BAD_LISTS) {
  test(`catchUp: ${name} on every target read: reported, retried after the backoff, CatchUpBudgetError naming the target version, nothing saved; once, the same run recovers`, async () => {
    await withCheckpointedServer({}, async (h) => {
      const before = h.checkpoint;
      h.server.inject({ verb: "list", resource: "configmaps", times: Infinity, fault });
      const out = await h.run({ budgetMs: 1_000 });
      await assertHonest(h, before, out, BOUND);
      assert.ok(out.failure instanceof CatchUpBudgetError, String(out.failure));
      assert.match(out.failure.message, /before the target version was read/);
      assert.ok(expected(out.failure.cause), `the cause is the last error: ${out.failure.cause}`);
      assertReported(out, "list", expected, name);
      assert.equal(watches(out).length, 0, "no watch without a target");

      h.server.clearFaults();
      h.server.inject({ verb: "list", resource: "configmaps", times: 1, fault });
      const once = await h.run({ budgetMs: 2_000 });
      await assertHonest(h, before, once, BOUND);
      assertReported(once, "list", expected, name);
      assert.equal(once.result?.complete, true);
      assert.equal(once.result?.listed, undefined, "the checkpoint is used");
      assert.deepEqual(versions(once.result!.objects.values()), h.serverObjects());
    });
  });
}

// ---------------------------------------------------------------------------
// The relist (after a 410) answered with garbage
// ---------------------------------------------------------------------------

for (const { name, fault, expected } of BAD_LISTS) {
  test(`catchUp: ${name} on every relist after a 410: reported, never taken for a list, at the budget complete: false with the checkpoint's objects; healed, complete`, async () => {
    await withCheckpointedServer({}, async (h) => {
      const before = h.checkpoint;
      // the target read passes (written in one chunk), every later list is bad
      h.server.inject({
        verb: "list",
        resource: "configmaps",
        times: 1,
        fault: { kind: "chunked", chunkSize: 1 << 20 },
      });
      const bad = h.server.inject({ verb: "list", resource: "configmaps", times: Infinity, fault });
      h.server.inject({
        verb: "watch",
        resource: "configmaps",
        fault: { kind: "status", code: 410 },
      });
      const out = await h.run({ budgetMs: 1_000 });
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.failure, undefined, String(out.failure));
      assertReported(out, "list", expected, name);
      assertReported(out, "watch", isStatusError(410), "the 410");
      assert.ok(bad.fired >= 1);
      const r = out.result!;
      assert.equal(r.complete, false);
      assert.equal(r.listed, undefined, "no bad list was taken for a list");
      assert.equal(r.resourceVersion, before.resourceVersion);
      assert.deepEqual(versions(r.objects.values()), before.objects, "the checkpoint's objects");
      assert.deepEqual(r.changes, []);
      for (const l of fullLists(out)) {
        assert.equal(l.query.get("resourceVersion"), before.resourceVersion);
      }
      await assertHealed(h);
    });
  });
}

test("catchUp: null, number and array list items in the relist are reported and left out, the rest is applied: complete, objects = server", async () => {
  await withCheckpointedServer({ storage: "file" }, async (h) => {
    const before = h.checkpoint;
    const s = h.server;
    const items: unknown[] = s.objects({ resource: "configmaps", namespace: NS });
    items.splice(1, 0, null, 42, ["not", "an", "object"]);
    const body = JSON.stringify({
      kind: "ConfigMapList",
      apiVersion: "v1",
      metadata: { resourceVersion: s.resourceVersion },
      items,
    });
    s.inject({
      verb: "list",
      resource: "configmaps",
      times: 1,
      fault: { kind: "chunked", chunkSize: 1 << 20 },
    });
    s.inject({ verb: "list", resource: "configmaps", fault: { kind: "raw", data: body } });
    s.inject({ verb: "watch", resource: "configmaps", fault: { kind: "status", code: 410 } });
    const out = await h.run();
    await assertHonest(h, before, out, BOUND);
    const bad = out.errors.filter((e) => e.error instanceof MalformedResponseError)
      .map((e) => e.error as MalformedResponseError);
    assert.deepEqual(bad.map((e) => e.where), ["list item", "list item", "list item"]);
    assert.equal(out.result?.complete, true);
    assert.equal(out.result?.listed, "expired");
    assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
    assert.deepEqual(changes(out.result!), ["update fx/cm-0"]);
  });
});

// ---------------------------------------------------------------------------
// Objects and lists of the wrong kind (with expectedKind)
// ---------------------------------------------------------------------------

const secret = (rv: string) => ({
  kind: "Secret",
  apiVersion: "v1",
  metadata: { name: "s", namespace: NS, resourceVersion: rv },
});

test("catchUp with expectedKind: a Secret event on the ConfigMap watch is reported (UnexpectedKindError) and never returned or saved: complete, objects = server", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      fault: {
        kind: "raw",
        data: JSON.stringify({ type: "ADDED", object: secret(h.server.resourceVersion) }) + "\n",
        then: "continue",
      },
    });
    const out = await h.run({ expectedKind: "ConfigMap" });
    await assertHonest(h, before, out, BOUND);
    assert.ok(out.errors.some((e) => e.error instanceof UnexpectedKindError), "reported");
    assert.equal(out.result?.objects.has("fx/s"), false, "not returned");
    assert.equal(out.result?.complete, true);
    assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
  });
});

test("catchUp with expectedKind: a SecretList answering the relist after a 410 is reported and not taken for the ConfigMaps; the next relist is: complete, objects = server", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    const body = JSON.stringify({
      kind: "SecretList",
      apiVersion: "v1",
      metadata: { resourceVersion: h.server.resourceVersion },
      items: [secret(h.server.resourceVersion)],
    });
    h.server.inject({
      verb: "list",
      resource: "configmaps",
      times: 1,
      fault: { kind: "chunked", chunkSize: 1 << 20 },
    });
    h.server.inject({ verb: "list", resource: "configmaps", fault: { kind: "raw", data: body } });
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      fault: { kind: "status", code: 410 },
    });
    const out = await h.run({ expectedKind: "ConfigMap" });
    await assertHonest(h, before, out, BOUND);
    assert.ok(out.errors.some((e) => e.error instanceof UnexpectedKindError), "reported");
    assert.equal(out.result?.objects.has("fx/s"), false, "not returned");
    assert.equal(out.result?.complete, true);
    assert.equal(out.result?.listed, "expired");
    assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
  });
});

// ---------------------------------------------------------------------------
// Stalls and slowloris on real HTTP: the budget bounds them
// ---------------------------------------------------------------------------

test("catchUp: every watch stalls after its headers: at the budget complete: false, the checkpoint's objects saved as they were; healed, complete", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      times: Infinity,
      fault: { kind: "stall" },
    });
    const out = await h.run({ budgetMs: 1_000 });
    await assertHonest(h, before, out, BOUND);
    assert.equal(out.failure, undefined, String(out.failure));
    assert.equal(out.result?.complete, false);
    assert.equal(out.result?.resourceVersion, before.resourceVersion);
    assert.ok(out.result?.saved);
    assert.equal(watches(out).length, 1);
    await assertHealed(h);
  });
});

test("catchUp: every target read stalls halfway through its body: CatchUpBudgetError naming the target version, nothing saved; healed, complete", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "list",
      resource: "configmaps",
      times: Infinity,
      fault: { kind: "stall" },
    });
    const out = await h.run({ budgetMs: 1_000 });
    await assertHonest(h, before, out, BOUND);
    assert.ok(out.failure instanceof CatchUpBudgetError, String(out.failure));
    assert.match(out.failure.message, /before the target version was read/);
    await assertHealed(h);
  });
});

test("catchUp: a slowloris watch (bookmarks at the checkpoint's version, a byte at a time, forever) ends at the budget: complete: false, nothing applied, the checkpoint saved as it was", async () => {
  await withCheckpointedServer({}, async (h) => {
    const before = h.checkpoint;
    const line = enc.encode(
      JSON.stringify({
        type: "BOOKMARK",
        object: { kind: "ConfigMap", metadata: { resourceVersion: before.resourceVersion } },
      }) + "\n",
    );
    const slow = await startHttpServer(async (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      let gone = false;
      res.on("close", () => (gone = true));
      for (let i = 0; !gone; i++) {
        res.write(line.subarray(i % line.length, i % line.length + 1));
        await new Promise((r) => setTimeout(r, 5));
      }
    });
    try {
      // Watches go to the slow server, everything else to the fake API server.
      const client = new KubeClient({
        server: h.server.url,
        fetch: (input, init) => {
          const url = new URL(input instanceof Request ? input.url : String(input));
          if (url.searchParams.get("watch") === "1") {
            const to = new URL(slow.url);
            url.host = to.host;
          }
          return fetch(url, init);
        },
      });
      const lw = resourceListerWatcher(client, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: NS,
      });
      const out = await h.run({ budgetMs: 1_000 }, lw);
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.failure, undefined, String(out.failure));
      assert.equal(out.result?.complete, false);
      assert.equal(out.result?.resourceVersion, before.resourceVersion);
      assert.deepEqual(out.result?.changes, []);
      assert.equal(slow.seen.length, 1, "one watch, never cut and retried in a loop");
    } finally {
      await slow.close();
    }
  });
});

test("catchUp: the cluster-identity read answered 503, or with an HTML page: the checkpoint is still used, the run is complete, and what it saves loads back", async () => {
  for (const fault of [{ kind: "status", code: 503 }, { kind: "raw", data: "<html>hi</html>" }]) {
    await withCheckpointedServer({}, async (h) => {
      const before = h.checkpoint;
      h.server.inject({ verb: "get", times: Infinity, fault: fault as Fault });
      const out = await h.run();
      await assertHonest(h, before, out, BOUND);
      assert.equal(out.result?.complete, true);
      assert.equal(out.result?.listed, undefined);
      assert.deepEqual(versions(out.result!.objects.values()), h.serverObjects());
    });
  }
});

test("catchUp: the server down (connection refused): CatchUpBudgetError with the network error as its cause, nothing saved; back up, complete", async () => {
  await withCheckpointedServer({ storage: "file" }, async (h) => {
    const before = h.checkpoint;
    await h.server.goDown();
    const out = await h.run({ budgetMs: 1_000 });
    await h.server.comeUp();
    await assertHonest(h, before, out, BOUND);
    assert.ok(out.failure instanceof CatchUpBudgetError, String(out.failure));
    assert.ok(out.failure.cause instanceof KubeNetworkError, String(out.failure.cause));
    assertReported(out, "list", (e) => e instanceof KubeNetworkError, "connection refused");
    await assertHealed(h);
  });
});

test("catchUp: aborted while every watch is answered 503: rejects with the abort's reason, saves nothing, leaves the checkpoint as it was", async () => {
  await withCheckpointedServer({ storage: "file" }, async (h) => {
    const before = h.checkpoint;
    h.server.inject({
      verb: "watch",
      resource: "configmaps",
      times: Infinity,
      fault: { kind: "status", code: 503 },
    });
    const ac = new AbortController();
    const reason = new Error("stop");
    const since = h.server.requestCount;
    const running = h.run({ budgetMs: 10_000, signal: ac.signal });
    await eventually(
      () => h.server.requests.some((r) => r.seq > since && r.verb === "watch"),
      "a watch refused",
    );
    ac.abort(reason);
    const out = await running;
    await assertHonest(h, before, out, BOUND, reason);
    assert.equal(out.failure, reason);
    await assertHealed(h);
  });
});

// ---------------------------------------------------------------------------
// Waits on injected time: a scripted lister-watcher and a ManualClock
// ---------------------------------------------------------------------------

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };

/** A scripted server at version 10 with a and b, a checkpoint at 8 holding them at 5 and 6. */
async function scripted() {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("a", "5"), cm("b", "6", { v: "2" })];
  lw.resourceVersion = "10";
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, KEY, {
    identity,
    resourceVersion: "8",
    items: [cm("a", "5"), cm("b", "6")],
  });
  const errors: Array<{ error: unknown; phase: string; at: number }> = [];
  const run = (options: Partial<CatchUpOptions> = {}) => {
    const state: { result?: CatchUpResult; failure?: unknown; settled: boolean } = {
      settled: false,
    };
    const promise = catchUp(lw, {
      storage,
      key: KEY,
      identity,
      clock,
      random: () => 0,
      onError: (error, phase) => errors.push({ error, phase, at: clock.now() }),
      ...options,
    }).then((r) => (state.result = r), (e) => (state.failure = e))
      .finally(() => (state.settled = true));
    return Object.assign(state, { promise });
  };
  /**
   * The checkpoint now stored holds what `r` returned, at the version its
   * save says (no change writes nothing: the stored version may be older,
   * with the same objects).
   */
  const assertSavedAsReturned = async (r: CatchUpResult) => {
    const loaded = await loadCheckpoint(storage, KEY, identity);
    assert.ok(r.saved, "saved");
    assert.equal(loaded?.resourceVersion, r.saved.resourceVersion);
    if (r.saved.written !== "none") assert.equal(loaded?.resourceVersion, r.resourceVersion);
    assert.deepEqual(versions(loaded!.items), versions(r.objects.values()));
  };
  return { clock, lw, storage, errors, run, assertSavedAsReturned };
}

/** A watch refused at once, every time, with `fail()`. */
function refused(fail: () => unknown) {
  return (): AsyncIterable<WatchEvent> => {
    throw fail();
  };
}

test("catchUp on fake time: 429 with a Retry-After of 30 days on the target read waits the cap (60 s), not 30 days and not nothing", async () => {
  const t = await scripted();
  t.lw.onList = (o, n) => {
    if (n === 0) throw new KubeStatusError({ code: 429, retryAfterMs: 2_592_000_000 });
    return { metadata: { resourceVersion: "10" }, items: o.limit === 1 ? [] : t.lw.objects };
  };
  t.lw.onWatch = (o) => events([ev("MODIFIED", cm("b", "10", { v: "2" }))], o);
  const r = t.run({ budgetMs: 120_000 });
  await t.clock.advance(59_999);
  assert.equal(t.lw.of("list").length, 1);
  await t.clock.advance(1);
  await r.promise;
  assert.deepEqual(t.lw.of("list").map((c) => c.at), [0, 60_000]);
  assert.equal(r.result?.complete, true);
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: 429 with a Retry-After of 30 days on the watch: one watch, complete: false at exactly the budget, the checkpoint saved as it was", async () => {
  const t = await scripted();
  t.lw.onWatch = refused(() => new KubeStatusError({ code: 429, retryAfterMs: 2_592_000_000 }));
  const r = t.run({ budgetMs: 10_000 });
  await t.clock.advance(9_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "8");
  assert.equal(t.lw.of("watch").length, 1);
  await t.assertSavedAsReturned(r.result!);
});

for (
  const [name, fail] of [
    ["429 without a usable Retry-After", () => new KubeStatusError({ code: 429 })],
    ["a 503 with an HTML page", () => new KubeStatusError({ code: 503, request: "GET /x" })],
  ] as const
) {
  test(`catchUp on fake time: ${name} on every watch is paced by the backoff (0, 800, 2400, 5600 ms), never relisted; complete: false at the budget`, async () => {
    const t = await scripted();
    t.lw.onWatch = refused(fail);
    const r = t.run({ budgetMs: 10_000 });
    await t.clock.advance(10_000);
    await r.promise;
    assert.deepEqual(t.lw.of("watch").map((c) => c.at), [0, 800, 2_400, 5_600]);
    assert.ok(t.lw.of("watch").every((c) => c.rv === "8"));
    assert.equal(t.lw.of("list").length, 1, "the target read only");
    assert.equal(r.result?.complete, false);
    assert.equal(t.errors.length, 4);
    await t.assertSavedAsReturned(r.result!);
  });
}

test("catchUp on fake time: a watch that ends at once with nothing, every time, while the cluster moves on: ShortWatchError each time, two watches at most, then one list (no hot loop): complete", async () => {
  const t = await scripted();
  let target = 10;
  t.lw.onList = (o) =>
    o.limit === 1
      ? { metadata: { resourceVersion: String(target++) }, items: [] } // always moved on
      : { metadata: { resourceVersion: "12" }, items: t.lw.objects };
  t.lw.onWatch = (o) => events([], o, "close");
  const r = t.run({ budgetMs: 10_000 });
  await t.clock.advance(10_000);
  await r.promise;
  assert.ok(t.lw.of("watch").length <= 2, `${t.lw.of("watch").length} watches`);
  assert.ok(t.errors.length >= 1);
  assert.ok(t.errors.every((e) => e.error instanceof ShortWatchError));
  assert.equal(
    t.lw.of("list").filter((c) => (c.options as { limit?: number }).limit !== 1).length,
    1,
    "one list",
  );
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, "no-proof");
  assert.equal(r.result?.resourceVersion, "12");
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: a watch that opens and says nothing ends at exactly a budget shorter than its idle deadline: complete: false, the checkpoint saved as it was", async () => {
  const t = await scripted();
  const r = t.run({ budgetMs: 4_000 }); // the idle deadline: 3 s watches + 2 s
  await t.clock.advance(3_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "8");
  assert.equal(t.lw.of("watch").length, 1);
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: a watch that stalls (a half-open connection) is cut by its idle deadline, reported, and rewatched within the default budget: complete", async () => {
  const t = await scripted();
  t.lw.onWatch = (o, n) => events(n === 0 ? [] : [ev("MODIFIED", cm("b", "10", { v: "2" }))], o);
  const r = t.run(); // the default budget, 10 s
  await t.clock.advance(10_000);
  await r.promise;
  assert.ok(t.errors.some((e) => e.error instanceof WatchIdleTimeoutError), "reported");
  assert.equal(t.lw.of("watch").length, 2, "rewatched");
  assert.ok(t.lw.of("watch").every((c) => c.rv === "8"));
  assert.equal(r.result?.complete, true);
  assert.equal(r.result?.listed, undefined);
  assert.deepEqual(changes(r.result!), ["update ns/b"]);
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: a slowloris watch (a bookmark at the checkpoint's version every 100 ms, forever) ends at exactly the budget, complete: false", async () => {
  const t = await scripted();
  t.lw.onWatch = async function* (o: WatchOptions) {
    o.onConnected?.();
    while (!o.signal?.aborted) {
      await new Promise<void>((resolve) => {
        const onAbort = () => {
          t.clock.clearTimeout(id);
          resolve();
        };
        const id = t.clock.setTimeout(() => {
          o.signal?.removeEventListener("abort", onAbort);
          resolve();
        }, 100);
        o.signal?.addEventListener("abort", onAbort, { once: true });
      });
      if (o.signal?.aborted) return;
      yield {
        type: "BOOKMARK",
        object: { kind: "ConfigMap", metadata: { resourceVersion: "8" } },
      } as WatchEvent;
    }
  };
  const r = t.run({ budgetMs: 5_000 });
  await t.clock.advance(4_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "8");
  assert.equal(t.lw.of("watch").length, 1);
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: a watch that brings one change below the target, then nothing: complete: false, the change returned and saved at its version", async () => {
  const t = await scripted();
  t.lw.onWatch = (o) => events([ev("MODIFIED", cm("b", "9", { v: "2" }))], o);
  const r = t.run({ budgetMs: 5_000 });
  await t.clock.advance(5_000);
  await r.promise;
  assert.equal(r.result?.complete, false);
  assert.equal(r.result?.resourceVersion, "9");
  assert.deepEqual(changes(r.result!), ["update ns/b"]);
  await t.assertSavedAsReturned(r.result!);
});

test("catchUp on fake time: a target read that never answers (and ignores its signal): CatchUpBudgetError at exactly the budget, nothing saved", async () => {
  const t = await scripted();
  t.lw.onList = () => new Promise(() => {});
  const r = t.run({ budgetMs: 3_000 });
  await t.clock.advance(2_999);
  assert.equal(r.settled, false);
  await t.clock.advance(1);
  await r.promise;
  assert.ok(r.failure instanceof CatchUpBudgetError, String(r.failure));
  assert.equal((await loadCheckpoint(t.storage, KEY, identity))?.resourceVersion, "8");
});
