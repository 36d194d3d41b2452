/**
 * The harness of `catch_up_hostile_test.ts`: a fake API server over real
 * HTTP holding ConfigMaps in `fx`, a checkpoint saved by a good `catchUp`
 * in a real storage (memory, or files in a temporary directory), and one
 * attacked `catchUp` run whose every claim is checked against the server's
 * own state and the storage's content.
 *
 * @module
 */
import { unhandledRejections } from "../_unhandled_rejections.ts";
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configMap } from "../_harness.ts";
import {
  KubeNetworkError,
  ListTimeoutError,
  ShortWatchError,
  UnexpectedKindError,
  WatchDecodeError,
  WatchIdleTimeoutError,
} from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { MalformedResponseError } from "../../src/api/malformed_response_error.ts";
import { RequestRefusedError } from "../../src/api/request_refused_error.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { fileCheckpointStorage } from "../../src/checkpoint/file_checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { catchUp } from "../../src/reflector/catch_up.ts";
import { CatchUpBudgetError } from "../../src/reflector/catch_up_budget_error.ts";
import type { CatchUpOptions, CatchUpResult } from "../../src/reflector/catch_up_options.ts";
import type { ErrorPhase } from "../../src/reflector/watcher_options.ts";
import { ListDecodeError } from "../../src/api/list_decode_error.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import type { ListerWatcher } from "../../src/transport/lister_watcher.ts";
import type { ResourceIdentity } from "../../src/transport/resource_identity.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer, type RecordedRequest } from "../../testkit.ts";

export const KEY = "cms";
export const NS = "fx";

/** catchUp's backoff with `random: () => 0` (jitter 1.0 draws nothing): 800, 1600, 3200... ms. */
const SCHEDULE_MS = [800, 1_600, 3_200, 6_400, 12_800, 25_600];

/**
 * The most attempts of one failing request that can start within
 * `budgetMs` when each retry waits the backoff (a slower machine only
 * makes fewer).
 */
export function maxAttempts(budgetMs: number): number {
  let attempts = 1;
  let waited = 0;
  for (const d of SCHEDULE_MS) {
    if (waited + d > budgetMs) break;
    waited += d;
    attempts++;
  }
  return attempts;
}

/** The errors a handled failure may be reported as: every one typed, never a bare Error. */
export function isTyped(e: unknown): boolean {
  return e instanceof KubeStatusError || e instanceof WatchDecodeError ||
    e instanceof ListDecodeError || e instanceof MalformedResponseError ||
    e instanceof UnexpectedKindError || e instanceof ShortWatchError ||
    e instanceof WatchIdleTimeoutError || e instanceof ListTimeoutError ||
    e instanceof KubeNetworkError || e instanceof RequestRefusedError ||
    e instanceof CheckpointError;
}

/** The `key → resourceVersion` of some objects, sorted by key. */
export function versions(objects: Iterable<KubeObject>): Array<[string, string]> {
  return [...objects]
    .map((o): [string, string] => [
      `${o.metadata?.namespace}/${o.metadata?.name}`,
      String(o.metadata?.resourceVersion),
    ])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** What one attacked run did. */
export interface Outcome {
  result?: CatchUpResult;
  /** What it rejected with, if it did. */
  failure?: unknown;
  errors: Array<{ error: unknown; phase: ErrorPhase }>;
  /** The requests it made to the server (every verb). */
  requests: RecordedRequest[];
  rejections: unknown[];
  budgetMs: number;
}

/** A server seeded with ConfigMaps, a storage holding a good run's checkpoint, and helpers. */
export interface Checkpointed {
  server: FakeApiServer;
  lw: ListerWatcher;
  storage: CheckpointStorage;
  identity: ResourceIdentity;
  /** The checkpoint the good run saved: its version and objects. */
  checkpoint: { resourceVersion: string; objects: Array<[string, string]> };
  /** Runs one catchUp (`random: () => 0`, budget 2 s unless told) and records what it did. */
  run(options?: Partial<CatchUpOptions>, lw?: ListerWatcher): Promise<Outcome>;
  /** The server's ConfigMaps in `fx`, as `key → resourceVersion`. */
  serverObjects(): Array<[string, string]>;
  /** The checkpoint now in the storage (`undefined`: none). */
  stored(): Promise<{ resourceVersion: string; objects: Array<[string, string]> } | undefined>;
}

export function lwOf(server: FakeApiServer, maxEventLength?: number): ListerWatcher {
  return resourceListerWatcher(new KubeClient({ server: server.url }), {
    apiVersion: "v1",
    resource: "configmaps",
    namespace: NS,
    maxEventLength,
  });
}

/**
 * Starts a fake server with `seed` ConfigMaps in `fx`, saves a checkpoint
 * with a good `catchUp` into a memory or file storage, then changes one
 * object (so a watch from the checkpoint proves the target with an event),
 * runs `fn`, and stops everything whatever happens.
 */
export async function withCheckpointedServer(
  options: { storage?: "memory" | "file"; seed?: number; maxEventLength?: number },
  fn: (h: Checkpointed) => Promise<void>,
): Promise<void> {
  const server = await FakeApiServer.start({ maxWatchMs: 300 });
  let dir: string | undefined;
  try {
    let storage: CheckpointStorage;
    if (options.storage === "file") {
      dir = await mkdtemp(join(tmpdir(), "kube-reflector-catch-up-hostile-"));
      storage = fileCheckpointStorage(join(dir, "checkpoints"));
    } else storage = memoryCheckpointStorage();
    for (let i = 0; i < (options.seed ?? 3); i++) {
      server.create(configMap(`cm-${i}`, NS, { i: String(i) }));
    }
    const lw = lwOf(server, options.maxEventLength);
    const identity = await lw.identity!({});
    const good = await catchUp(lw, { storage, key: KEY, onError: () => {} });
    assert.equal(good.complete, true, "the good run");
    assert.ok(good.saved, "the good run saved its checkpoint");
    const serverObjects = () => versions(server.objects({ resource: "configmaps", namespace: NS }));
    const stored = async () => {
      const loaded = await loadCheckpoint(storage, KEY, identity);
      return loaded &&
        { resourceVersion: loaded.resourceVersion, objects: versions(loaded.items) };
    };
    const checkpoint = (await stored())!;
    assert.deepEqual(checkpoint.objects, serverObjects());
    server.update(configMap("cm-0", NS, { changed: "after the checkpoint" }));
    const run = async (o: Partial<CatchUpOptions> = {}, via: ListerWatcher = lw) => {
      const since = server.requestCount;
      const errors: Outcome["errors"] = [];
      const budgetMs = o.budgetMs ?? 2_000;
      const { value, rejections } = await unhandledRejections(() =>
        catchUp(via, {
          storage,
          key: KEY,
          random: () => 0,
          onError: (error, phase) => errors.push({ error, phase }),
          ...o,
          budgetMs,
        }).then((result) => ({ result, failure: undefined }), (failure) => ({ failure }))
      );
      const requests = server.requests.filter((r) => r.seq > since);
      return { ...value, errors, requests, rejections, budgetMs } as Outcome;
    };
    await fn({ server, lw, storage, identity, checkpoint, run, serverObjects, stored });
  } finally {
    await server.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What every attacked run must hold, whatever the attack: it rejects only
 * with a typed error (a CatchUpBudgetError, or the abort's reason), leaves
 * no unhandled rejection, reports only typed errors, claims `complete`
 * only with exactly the server's objects at or past the target, saves a
 * checkpoint that is exactly what it returned (or leaves the previous one
 * untouched), and makes no more requests than the backoff lets it within
 * its budget (`perAttempt` per attempt, plus `fixed`).
 */
export async function assertHonest(
  h: Checkpointed,
  before: { resourceVersion: string; objects: Array<[string, string]> },
  out: Outcome,
  bound: { perAttempt: number; fixed: number },
  abortReason?: unknown,
): Promise<void> {
  assert.deepEqual(out.rejections, [], "no unhandled rejection");
  if (out.failure !== undefined) {
    assert.ok(
      out.failure instanceof CatchUpBudgetError || out.failure === abortReason,
      `catchUp rejected with ${
        String(out.failure)
      }: only a CatchUpBudgetError or the abort's reason`,
    );
  }
  const untyped = out.errors.filter((e) => !isTyped(e.error));
  assert.deepEqual(
    untyped.map((e) => `${e.phase}: ${String(e.error)}`),
    [],
    "every reported error is typed",
  );
  const r = out.result;
  if (r?.complete) {
    assert.deepEqual(versions(r.objects.values()), h.serverObjects(), "complete: objects = server");
    assert.ok(BigInt(r.resourceVersion) >= BigInt(r.target), "complete: at or past the target");
    assert.ok(BigInt(r.target) <= BigInt(h.server.resourceVersion));
  }
  const stored = await h.stored();
  if (r?.saved) {
    assert.deepEqual(stored, {
      resourceVersion: r.resourceVersion,
      objects: versions(r.objects.values()),
    }, "the saved checkpoint is what was returned");
    assert.equal(r.saved.count, r.objects.size);
  } else {
    assert.deepEqual(stored, before, "nothing saved: the previous checkpoint is untouched");
  }
  if (r && !r.complete && r.resourceVersion !== "") {
    // Not complete, yet what was returned is a state the server was in: at
    // the checkpoint's version, exactly the checkpoint (nothing half-applied).
    assert.ok(BigInt(r.resourceVersion) >= BigInt(before.resourceVersion));
    if (r.resourceVersion === before.resourceVersion) {
      assert.deepEqual(versions(r.objects.values()), before.objects, "incomplete: the checkpoint");
    }
  }
  const limit = bound.fixed + bound.perAttempt * maxAttempts(out.budgetMs);
  assert.ok(
    out.requests.length <= limit,
    `${out.requests.length} requests within a ${out.budgetMs} ms budget, the backoff allows ${limit}: ` +
      out.requests.map((q) => `${q.verb} ${q.query}`).join(", "),
  );
}
