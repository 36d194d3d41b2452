import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { Controller } from "../../src/controller/controller.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import type { HandlerRegistration } from "../../src/informer/handler_registration.ts";
import type { ResourceEventHandler } from "../../src/informer/resource_event_handler.ts";
import { Informer } from "../../src/informer/informer.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { resourceListerWatcher } from "../../src/transport/resource_lister_watcher.ts";
import { FakeApiServer } from "../../src/testkit/fake_api_server.ts";
import { ManualClock } from "../../src/testkit/manual_clock.ts";
import { until } from "../informer/_fake_lister_watcher.ts";

const cm = (name: string, namespace = "default", data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
  data,
});

const pod = (name: string, owner?: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    namespace: "default",
    ...(owner ? { ownerReferences: [{ kind: "ConfigMap", name: owner, uid: owner }] } : {}),
  },
});

async function setup(objects: KubeObject[] = []) {
  const server = await FakeApiServer.start();
  for (const o of objects) server.create(o);
  const client = new KubeClient({ server: server.url });
  const informer = (resource: string) =>
    new Informer(resourceListerWatcher(client, { apiVersion: "v1", resource }), {
      name: resource,
      onError: () => {},
    });
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  const run = (i: Informer) => void runs.push(i.run({ signal: ac.signal }));
  const stop = async () => {
    ac.abort();
    await Promise.all(runs);
    await server.close();
  };
  return { server, informer, ac, run, stop };
}

/** Yields to ready work a few times (no wall-clock wait). */
async function ticks(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
}

test("controller waits for every informer to sync before the first reconcile, then reconciles each object once", async () => {
  const env = await setup([cm("a"), cm("b"), pod("p1", "a"), pod("p2", "b")]);
  try {
    const configMaps = env.informer("configmaps");
    const pods = env.informer("pods");
    const reconciled: string[] = [];
    const controller = new Controller({
      name: "c",
      informers: [configMaps, { informer: pods, map: (p) => `default/${p.metadata.name}` }],
      reconcile: (key) => void reconciled.push(key),
    });
    env.run(configMaps);
    const done = controller.run({ signal: env.ac.signal });
    await configMaps.waitForSync();
    await ticks();
    assert.equal(controller.queue.length, 2, "the configmaps are enqueued");
    assert.deepEqual(reconciled, [], "no reconcile while pods have not synced");
    env.run(pods); // syncs late
    await until(() => reconciled.length === 4, "four reconciles");
    await ticks();
    assert.deepEqual(reconciled.sort(), ["default/a", "default/b", "default/p1", "default/p2"]);
    env.ac.abort();
    await done;
  } finally {
    await env.stop();
  }
});

test("controller reconciles a key again after a change, and maps changes to other keys (an owner)", async () => {
  const env = await setup([cm("a"), pod("p1", "a")]);
  try {
    const configMaps = env.informer("configmaps");
    const pods = env.informer("pods");
    const reconciled: string[] = [];
    const controller = new Controller({
      name: "c",
      informers: [configMaps, {
        informer: pods,
        map: (p) =>
          (p.metadata.ownerReferences as { name: string }[] | undefined)?.map((o) =>
            `${p.metadata.namespace}/${o.name}`
          ),
      }],
      reconcile: (key) => void reconciled.push(key),
    });
    env.run(configMaps);
    env.run(pods);
    const done = controller.run({ signal: env.ac.signal });
    await until(() => reconciled.length === 1, "the first reconcile");
    await ticks();
    assert.deepEqual(reconciled, ["default/a"], "a and its pod: one key, reconciled once");
    env.server.delete(pod("p1", "a"));
    await until(() => reconciled.length === 2, "the owner reconciled on its pod's delete");
    env.server.create(pod("p2")); // no owner: no key
    env.server.update(cm("a", "default", { v: "1" }));
    await until(() => reconciled.length === 3, "a reconciled on its own update");
    await ticks();
    assert.deepEqual(reconciled, ["default/a", "default/a", "default/a"]);
    env.ac.abort();
    await done;
  } finally {
    await env.stop();
  }
});

test("controller retries a failing reconcile with backoff and reports each error with its key", async () => {
  const env = await setup([cm("a")]);
  try {
    const configMaps = env.informer("configmaps");
    const clock = new ManualClock();
    let calls = 0;
    const errors: [string, string | undefined][] = [];
    const controller = new Controller({
      name: "c",
      informers: [configMaps],
      queue: { clock },
      reconcile: () => {
        if (++calls <= 3) throw new Error(`failure ${calls}`);
      },
      onError: (err, key) => void errors.push([(err as Error).message, key]),
    });
    env.run(configMaps);
    const done = controller.run({ signal: env.ac.signal });
    await until(() => calls === 1 && controller.queue.numRequeues("default/a") === 1, "a failure");
    assert.deepEqual(errors, [["failure 1", "default/a"]]);
    await clock.advance(4);
    assert.equal(calls, 1, "not before 5 ms");
    await clock.advance(1);
    await until(() => calls === 2, "the first retry");
    await until(() => controller.queue.numRequeues("default/a") === 2, "requeued");
    await clock.advance(9);
    assert.equal(calls, 2, "not before 10 ms");
    await clock.advance(1);
    await until(() => calls === 3, "the second retry");
    await until(() => controller.queue.numRequeues("default/a") === 3, "requeued");
    await clock.advance(20);
    await until(() => calls === 4, "the third retry");
    await until(() => controller.queue.numRequeues("default/a") === 0, "success forgets the key");
    assert.deepEqual(errors.map(([m]) => m), ["failure 1", "failure 2", "failure 3"]);
    env.ac.abort();
    await done; // resolves: reconcile errors never reject run()
  } finally {
    await env.stop();
  }
});

test("controller workers never reconcile one key at once, but reconcile different keys in parallel", async () => {
  const env = await setup([cm("a"), cm("b"), cm("c")]);
  try {
    const configMaps = env.informer("configmaps");
    const active = new Set<string>();
    let maxActive = 0;
    let overlapped = false;
    const counts = new Map<string, number>();
    let release!: () => void;
    let gate = new Promise<void>((r) => release = r);
    const controller = new Controller({
      name: "c",
      informers: [configMaps],
      workers: 4,
      reconcile: async (key) => {
        if (active.has(key)) overlapped = true;
        active.add(key);
        maxActive = Math.max(maxActive, active.size);
        counts.set(key, (counts.get(key) ?? 0) + 1);
        await gate;
        active.delete(key);
      },
    });
    env.run(configMaps);
    const done = controller.run({ signal: env.ac.signal });
    await until(() => active.size === 3, "three reconciles at once");
    for (let i = 1; i <= 3; i++) env.server.update(cm("a", "default", { v: String(i) }));
    const v = () =>
      (configMaps.lister().get("default", "a") as ReturnType<typeof cm> | undefined)?.data.v;
    await until(() => v() === "3", "the updates seen");
    await ticks(20);
    assert.equal(counts.get("default/a"), 1, "a is not reconciled again while in progress");
    const first = release;
    gate = new Promise<void>((r) => release = r);
    first();
    await until(() => counts.get("default/a") === 2, "a reconciled again after it was done");
    release();
    await ticks(20);
    assert.equal(counts.get("default/a"), 2, "three changes while in progress: one more reconcile");
    assert.equal(overlapped, false);
    assert.equal(maxActive, 3);
    env.ac.abort();
    await done;
  } finally {
    await env.stop();
  }
});

test("controller stops promptly on abort: reconciles see their signal aborted, handlers are removed, run resolves", async () => {
  const env = await setup([cm("a"), cm("b")]);
  try {
    const configMaps = env.informer("configmaps");
    const signals: AbortSignal[] = [];
    const registrations: HandlerRegistration[] = [];
    const controller = new Controller({
      name: "c",
      informers: [{
        name: configMaps.name,
        addEventHandler: (h) => {
          const r = configMaps.addEventHandler(h);
          registrations.push(r);
          return r;
        },
      }],
      reconcile: (_key, { signal }) =>
        new Promise<void>((_, reject) => {
          signals.push(signal);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
      onError: (err) => assert.fail(`an abort is not an error: ${err}`),
    });
    const ac = new AbortController();
    env.run(configMaps);
    const done = controller.run({ signal: ac.signal });
    await until(() => signals.length === 2, "two reconciles in progress");
    env.server.create(cm("c"));
    await until(() => controller.queue.length === 1, "c waits for a worker");
    ac.abort();
    await done;
    assert.ok(signals.every((s) => s.aborted));
    assert.equal(signals.length, 2, "c is not reconciled after the abort");
    assert.equal(controller.queue.shuttingDown, true);
    assert.equal(registrations.length, 1);
    assert.equal(registrations[0].removed, true, "the handler is removed");
    await assert.rejects(controller.run({ signal: ac.signal }), /already/);
  } finally {
    await env.stop();
  }
});

test("controller run resolves at once when aborted before its informers synced, and adds one listener to the signal", async () => {
  const env = await setup([cm("a")]);
  try {
    const configMaps = env.informer("configmaps");
    let reconciles = 0;
    const controller = new Controller({
      name: "c",
      informers: [configMaps],
      workers: 50,
      reconcile: () => void reconciles++,
    });
    const ac = new AbortController();
    let listeners = 0;
    const add = ac.signal.addEventListener.bind(ac.signal);
    ac.signal.addEventListener = ((...args: Parameters<typeof add>) => {
      listeners++;
      return add(...args);
    }) as typeof add;
    const done = controller.run({ signal: ac.signal });
    await ticks();
    ac.abort();
    await done;
    assert.equal(reconciles, 0);
    assert.ok(listeners <= 2, `few listeners on the caller's signal, got ${listeners}`);
  } finally {
    await env.stop();
  }
});

test("controller run rejects, naming it, when an informer stops before it synced", async () => {
  const env = await setup();
  try {
    const pods = env.informer("pods");
    const stopped = new AbortController();
    stopped.abort();
    await pods.run({ signal: stopped.signal });
    const controller = new Controller({ name: "c", informers: [pods], reconcile: () => {} });
    await assert.rejects(
      controller.run({ signal: env.ac.signal }),
      (err: Error) => /Controller c: informer\(s\) pods stopped before syncing/.test(err.message),
    );
  } finally {
    await env.stop();
  }
});

test("controller reports a key function's error and skips that change", async () => {
  const env = await setup([cm("a"), cm("b")]);
  try {
    const configMaps = env.informer("configmaps");
    const reconciled: string[] = [];
    const errors: [string, string | undefined][] = [];
    const controller = new Controller({
      name: "c",
      informers: [configMaps],
      keyOf: (o) => {
        const key = `${(o as KubeObject).metadata.name}`;
        if (key === "b") throw new Error("no key for b");
        return key;
      },
      reconcile: (key) => void reconciled.push(key),
      onError: (err, key) => void errors.push([(err as Error).message, key]),
    });
    env.run(configMaps);
    const done = controller.run({ signal: env.ac.signal });
    await until(() => reconciled.length === 1, "a reconciled");
    assert.deepEqual(errors, [["no key for b", undefined]]);
    env.ac.abort();
    await done;
  } finally {
    await env.stop();
  }
});

test("controller options are checked at construction", () => {
  const informer = { name: "x", addEventHandler: () => assert.fail("not at construction") };
  const ok = { name: "c", informers: [informer], reconcile: () => {} } as never;
  assert.ok(new Controller(ok));
  const bad = (patch: Record<string, unknown>) => ({ ...(ok as object), ...patch }) as never;
  assert.throws(() => new Controller(bad({ name: "" })), TypeError);
  assert.throws(() => new Controller(bad({ informers: [] })), TypeError);
  assert.throws(() => new Controller(bad({ informers: [{}] })), TypeError);
  assert.throws(() => new Controller(bad({ informers: [{ informer, map: 1 }] })), TypeError);
  assert.throws(() => new Controller(bad({ reconcile: undefined })), TypeError);
  assert.throws(() => new Controller(bad({ workers: 0 })), RangeError);
  assert.throws(() => new Controller(bad({ workers: 1.5 })), RangeError);
  assert.throws(() => new Controller(bad({ queue: { qps: -1 } })), RangeError);
  assert.equal(new Controller(ok).queue.name, "c", "the queue is named after the controller");
});

/** An informer stand-in that hands its handler to the test and is synced at once. */
function handInformer(name: string) {
  const box: { handler?: ResourceEventHandler<KubeObject>; registration?: HandlerRegistration } =
    {};
  const informer = {
    name,
    addEventHandler(handler: ResourceEventHandler<KubeObject>): HandlerRegistration {
      box.handler = handler;
      let removed = false;
      return box.registration = {
        hasSynced: () => true,
        waitForSync: () => Promise.resolve(),
        pending: 0,
        get removed() {
          return removed;
        },
        remove: () => void (removed = true),
      };
    },
  };
  return { informer, box };
}

test("controller keys tombstones by default, and hands a map the tombstone's last known object and both states of an update", async () => {
  const plain = handInformer("configmaps");
  const mapped = handInformer("pods");
  const mappedWith: string[] = [];
  const reconciled: string[] = [];
  const ac = new AbortController();
  const controller = new Controller({
    name: "c",
    informers: [plain.informer, {
      informer: mapped.informer,
      map: (o) => {
        mappedWith.push(o.metadata.name!);
        return [`owner/${o.metadata.name}`];
      },
    }],
    workers: 1,
    reconcile: (key) => {
      reconciled.push(key);
      if (reconciled.length === 4) ac.abort();
    },
  });
  const done = controller.run({ signal: ac.signal });
  await ticks();
  plain.box.handler!.onDelete!(new DeletedFinalStateUnknown("default/gone", cm("gone")));
  mapped.box.handler!.onDelete!(new DeletedFinalStateUnknown("default/p0", pod("p0")));
  mapped.box.handler!.onUpdate!(pod("p1"), pod("p2"));
  await done;
  assert.deepEqual(reconciled, ["default/gone", "owner/p0", "owner/p1", "owner/p2"]);
  assert.deepEqual(mappedWith, ["p0", "p1", "p2"]);
  assert.equal(plain.box.registration!.removed, true);
});

test("controller takes informers of different object types, each source with its own typed map", () => {
  interface Pod extends KubeObject {
    spec: { nodeName?: string };
  }
  interface Deployment extends KubeObject {
    spec: { replicas: number };
  }
  const client = new KubeClient({ server: "http://127.0.0.1:1" });
  const pods = new Informer<Pod>(
    resourceListerWatcher<Pod>(client, { apiVersion: "v1", resource: "pods" }),
  );
  const deployments = new Informer<Deployment>(
    resourceListerWatcher<Deployment>(client, { apiVersion: "apps/v1", resource: "deployments" }),
  );
  const controller = new Controller({
    name: "typed",
    informers: [deployments, { informer: pods, map: (pod: Pod) => pod.spec.nodeName }],
    reconcile: async () => {},
  });
  assert.equal(controller.name, "typed");
});
