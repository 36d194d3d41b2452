/**
 * A reflector's checkpoints against storages and identities that never
 * answer (and ignore their signal), on a ManualClock: `run()` ends when
 * aborted during a restore, and within `stopSaveTimeoutMs` of its stop.
 * Also: the cluster's identity is asked again until it is known.
 */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { metaNamespaceKeyFunc } from "../../src/cache/key_func.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { Reflector, type ReflectorOptions } from "../../src/reflector/reflector.ts";
import type { ReflectorCheckpointOptions } from "../../src/reflector/reflector_checkpoint.ts";
import { CheckpointSaveTimeoutError } from "../../src/reflector/checkpoint_save_timeout_error.ts";
import type { ErrorPhase } from "../../src/reflector/watcher_options.ts";
import type { ResourceIdentity } from "../../src/transport/resource_identity.ts";
import { ManualClock } from "../../testkit.ts";
import { cm, ScriptedListerWatcher } from "./_scripted_lister_watcher.ts";

const IDENTITY: ResourceIdentity = {
  server: "https://k8s.example.com",
  apiVersion: "v1",
  resource: "configmaps",
  namespace: "ns",
};

const never = <T>() => new Promise<T>(() => {});

/** A storage whose every call never answers, whatever its signal. */
const deaf: CheckpointStorage = { get: () => never(), put: () => never(), delete: () => never() };

async function start(
  checkpoint: ReflectorCheckpointOptions,
  identity?: (options: { signal?: AbortSignal }) => Promise<ResourceIdentity>,
  options: ReflectorOptions = {},
) {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("a", "5"), cm("b", "6")];
  if (identity) Object.assign(lw, { identity });
  const errors: Array<{ error: unknown; phase: ErrorPhase }> = [];
  const reflector = new Reflector(lw, new Indexer<KubeObject>(metaNamespaceKeyFunc), {
    clock,
    random: () => 0,
    useStreamingList: false,
    onError: (error, phase) => errors.push({ error, phase }),
    checkpoint,
    ...options,
  });
  const ac = new AbortController();
  let ended = false;
  const done = reflector.run({ signal: ac.signal }).finally(() => (ended = true));
  await clock.flush();
  return { clock, lw, reflector, errors, ac, done, ended: () => ended };
}

test("run() aborted during a restore ends at once, though the storage's get or the identity never answers", async () => {
  const cases: Array<[string, Parameters<typeof start>]> = [
    ["get", [{ storage: deaf, key: "k", identity: IDENTITY }]],
    ["identity", [{ storage: memoryCheckpointStorage(), key: "k" }, () => never()]],
  ];
  for (const [what, args] of cases) {
    const t = await start(...args);
    assert.equal(t.reflector.hasSynced(), false, `${what}: still restoring`);
    assert.equal(t.lw.of("list").length, 0, `${what}: no list before the restore`);
    t.ac.abort();
    await t.clock.flush();
    assert.ok(t.ended(), `${what}: run() ended`);
    await t.done;
    assert.deepEqual(t.errors, [], `${what}: an abort is no error`);
  }
});

test("run() ends within stopSaveTimeoutMs of its stop though the storage's put never answers, or an earlier save holds the queue, and reports the abandoned save", async () => {
  const idle: CheckpointStorage = { ...deaf, get: () => Promise.resolve(undefined) };
  for (const earlierSave of [false, true]) {
    const what = earlierSave ? "an earlier save without a signal" : "the save on stop";
    const t = await start({ storage: idle, key: "k", identity: IDENTITY, stopSaveTimeoutMs: 1000 });
    await t.reflector.synced;
    if (earlierSave) t.reflector.saveCheckpoint().catch(() => {}); // never ends: nobody aborts it
    t.ac.abort();
    await t.clock.advance(999);
    assert.equal(t.ended(), false, `${what}: still saving`);
    await t.clock.advance(1);
    assert.ok(t.ended(), `${what}: run() ended at stopSaveTimeoutMs`);
    await t.done;
    assert.ok(
      t.errors.some((e) =>
        e.phase === "checkpoint" && e.error instanceof CheckpointSaveTimeoutError &&
        e.error.timeoutMs === 1000 && /save on stop took over 1000 ms/.test(String(e.error))
      ),
      `${what}: reported`,
    );
  }
});

test("a reflector asks the lister-watcher's identity again until it knows the cluster, then keeps it", async () => {
  const storage = memoryCheckpointStorage();
  const answers: Array<ResourceIdentity | Error> = [
    IDENTITY, // at the restore: the cluster could not be read (a 503 at start-up)
    new Error("identity failed"), // a failure, reported by the save that asked
    { ...IDENTITY, cluster: "uid-1" },
  ];
  let asked = 0;
  const identity = () => {
    const answer = answers[Math.min(asked++, answers.length - 1)];
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  };
  const t = await start({ storage, key: "k", saveOnStop: false }, identity);
  await t.reflector.synced;
  assert.equal(asked, 1);
  await assert.rejects(t.reflector.saveCheckpoint(), /identity failed/);
  await t.reflector.saveCheckpoint();
  assert.equal(asked, 3, "asked again after an answer without the cluster, and after a failure");
  const saved = await loadCheckpoint(storage, "k", { ...IDENTITY, cluster: "uid-1" });
  assert.equal(saved?.identity.cluster, "uid-1", "the checkpoint records the cluster");
  await t.reflector.saveCheckpoint();
  assert.equal(asked, 3, "a known cluster is kept");
  t.ac.abort();
  await t.done;
});
