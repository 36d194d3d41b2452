/**
 * Replicas of a Controller (each with its own informer) on one test API
 * server, for leader election and sharding: the election or membership runs
 * on a manual clock, the informers on real time. Every reconcile records its
 * start and end, so that tests check that no key is reconciled by two
 * replicas at once, and by whom.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Controller } from "../../src/controller/controller.ts";
import type { ControllerLeaderElection } from "../../src/controller/controller_ownership.ts";
import type { ShardOptions } from "../../src/shard/shard_options.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer, ManualClock } from "../../testkit.ts";
import type { ControllerMetricsSources } from "../../src/metrics/controller_metrics.ts";

export const START = Date.parse("2026-12-06T00:00:00Z");

export const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default" },
  data,
});

/** Polls `cond` every ms of real time, up to 5 s. */
export async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 5_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  assert.ok(cond(), `timed out waiting for: ${what}`);
}

/**
 * Replicas of one controller, each with its own informer of ConfigMaps, on
 * one test API server holding `names`; `mode` says how they divide the keys.
 */
export async function replicaHarness(names: string[], mode: "leaderElection" | "shards") {
  const server = await FakeApiServer.start();
  for (const name of names) server.create(cm(name));
  const client = new KubeClient({ server: server.url });
  const clock = new ManualClock(START);
  const log: string[] = []; // "start a default/x", "end a default/x"
  const errors: unknown[] = [];
  const metricSources = new Map<string, ControllerMetricsSources>();
  const replicas: {
    id: string;
    controller: Controller;
    stop: AbortController;
    done: Promise<unknown>;
    informing: Promise<void>;
  }[] = [];
  const start = (
    id: string,
    options: {
      election?: Partial<ControllerLeaderElection & ShardOptions>;
      reconcile?: (key: string, signal: AbortSignal) => Promise<void> | void;
    } = {},
  ) => {
    const stop = new AbortController();
    const informer = new Informer(
      resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" }),
      { name: `configmaps-${id}`, onError: () => {} },
    );
    const informing = informer.run({ signal: stop.signal });
    const ownership: ControllerLeaderElection & ShardOptions = {
      client,
      namespace: "default",
      name: "ctrl",
      identity: id,
      clock,
      random: () => 0,
      onError: (err) => errors.push(err),
      ...options.election,
    };
    const controller = new Controller({
      name: "ctrl",
      informers: [informer],
      ...(mode === "shards" ? { shards: ownership } : { leaderElection: ownership }),
      reconcile: async (key, { signal }) => {
        log.push(`start ${id} ${key}`);
        try {
          await options.reconcile?.(key, signal);
        } finally {
          log.push(`end ${id} ${key}`);
        }
      },
      onError: (err) => errors.push(err),
      metrics: {
        reflector: () => ({ dispose() {} }),
        controller: (name, sources) => {
          metricSources.set(`${name}/${id}`, sources);
          return { dispose: () => metricSources.delete(`${name}/${id}`) };
        },
      },
    });
    const done = controller.run({ signal: stop.signal }).then(() => "ended", (err) => err);
    const replica = { id, controller, stop, done, informing };
    replicas.push(replica);
    return replica;
  };
  /** Waits (real time, by condition) until `timers` timers wait on the clock. */
  const settle = (timers: number) =>
    until(() => clock.pendingTimers >= timers, `${timers} timers on the clock`);
  const pass = async (ms: number, timers: number, step = 100) => {
    for (let t = 0; t < ms; t += step) {
      await settle(timers);
      await clock.advance(step);
    }
    await settle(timers);
  };
  const reconciledBy = (id: string) =>
    log.filter((l) => l.startsWith(`end ${id} `)).map((l) => l.split(" ")[2]).sort();
  const close = async () => {
    for (const r of replicas) r.stop.abort();
    await clock.flush();
    await Promise.all(replicas.map((r) => r.done));
    await Promise.all(replicas.map((r) => r.informing));
    await server.close();
  };
  return {
    server,
    client,
    clock,
    log,
    errors,
    metricSources,
    start,
    settle,
    pass,
    reconciledBy,
    close,
  };
}

/** Fails when a key's reconciles by two replicas overlap in `log`. */
export function assertNoOverlap(log: readonly string[]): void {
  const running = new Map<string, string>(); // key → replica
  for (const line of log) {
    const [what, id, key] = line.split(" ");
    if (what === "start") {
      const other = running.get(key);
      assert.ok(other === undefined, `${key} reconciled by ${other} and ${id} at once`);
      running.set(key, id);
    } else running.delete(key);
  }
}
