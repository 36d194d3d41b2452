/** finalizer() against the test API server: add, apply, cleanup and removal, races, aborts. */
import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  finalizer,
  FinalizerConflictError,
  type FinalizerHandlers,
  isConflict,
  KubeClient,
  type KubeObject,
  resourceClient,
} from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { LineReader } from "../testkit/_helpers.ts";
import { gatedFetch } from "../leader/_gated_fetch.ts";

const F = "example.com/cleanup";
const OTHER = "other.io/keep";
const REF = { apiVersion: "v1", resource: "configmaps", namespace: "fx" };
const cmRef = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name });

async function setup(fetchImpl?: typeof fetch) {
  const server = await FakeApiServer.start();
  const client = new KubeClient({ server: server.url, fetch: fetchImpl });
  const configMaps = resourceClient<KubeObject>(client, REF);
  const create = (name: string, finalizers?: string[]) =>
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "fx", ...(finalizers ? { finalizers } : {}) },
    });
  return { server, client, configMaps, create };
}

/** Handlers that record their calls; `fail` makes cleanup throw. */
function recording(options: { fail?: Error } = {}) {
  const calls: string[] = [];
  const signals: AbortSignal[] = [];
  const handlers: FinalizerHandlers<KubeObject, string> = {
    apply: (obj, { signal }) => {
      calls.push(`apply ${obj.metadata.name}@${obj.metadata.resourceVersion}`);
      signals.push(signal);
      return "applied!";
    },
    cleanup: async (obj, { signal }) => {
      calls.push(`cleanup ${obj.metadata.name}@${obj.metadata.resourceVersion}`);
      signals.push(signal);
      await Promise.resolve();
      if (options.fail) throw options.fail;
      return "cleaned!";
    },
  };
  return { calls, signals, handlers };
}

const patches = (server: FakeApiServer) => server.requests.filter((r) => r.method === "PATCH");

test("finalizer adds the finalizer with a guarded JSON patch and returns without applying (kube-rs)", async () => {
  const { server, configMaps, create } = await setup();
  try {
    const obj = create("a");
    const { calls, handlers } = recording();
    const done = await finalizer(configMaps, F, obj, handlers);
    assert.equal(done.action, "added");
    assert.deepEqual(done.action === "added" && done.object.metadata.finalizers, [F]);
    assert.deepEqual(calls, [], "apply waits for the next reconcile");
    assert.deepEqual(server.get(cmRef("a"))?.metadata.finalizers, [F]);
    // appended after others' finalizers
    const b = create("b", [OTHER]);
    await finalizer(configMaps, F, b, handlers);
    assert.deepEqual(server.get(cmRef("b"))?.metadata.finalizers, [OTHER, F]);
    assert.equal(patches(server).length, 2);
  } finally {
    await server.close();
  }
});

test("finalizer applies an object that carries the finalizer and is not being deleted", async () => {
  const { server, configMaps, create } = await setup();
  try {
    const obj = create("a", [F]);
    const { calls, signals, handlers } = recording();
    const done = await finalizer(configMaps, F, obj, handlers);
    assert.deepEqual(done, { action: "applied", value: "applied!" });
    assert.deepEqual(calls, [`apply a@${obj.metadata.resourceVersion}`]);
    assert.equal(signals[0].aborted, false, "a signal even when none was given");
    assert.equal(patches(server).length, 0, "nothing written");
  } finally {
    await server.close();
  }
});

test("finalizer: delete, cleanup, finalizer removed, object gone (the watch sees DELETED)", async () => {
  const { server, configMaps, create } = await setup();
  try {
    const created = create("a");
    const added = await finalizer(configMaps, F, created, recording().handlers);
    assert.equal(added.action, "added");
    await configMaps.delete("a");
    const deleting = await configMaps.get("a");
    assert.ok(deleting.metadata.deletionTimestamp, "finalizers keep it, marked");
    const res = await fetch(
      `${server.url}/api/v1/namespaces/fx/configmaps?watch=1&resourceVersion=${deleting.metadata.resourceVersion}`,
    );
    const reader = new LineReader(res);
    try {
      const { calls, handlers } = recording();
      const done = await finalizer(configMaps, F, deleting, handlers);
      assert.deepEqual(done, { action: "cleaned-up", value: "cleaned!" });
      assert.deepEqual(calls, [`cleanup a@${deleting.metadata.resourceVersion}`]);
      const event = await reader.event();
      assert.equal(event.type, "DELETED");
      assert.equal(event.object.metadata.name, "a");
      assert.equal(server.get(cmRef("a")), undefined);
    } finally {
      await reader.cancel();
    }
    await server.waitFor(() => server.openWatches === 0);
  } finally {
    await server.close();
  }
});

test("finalizer: a cleanup that throws rethrows and leaves the finalizer and the object", async () => {
  const { server, configMaps, create } = await setup();
  try {
    create("a", [F]);
    server.delete(cmRef("a"));
    const deleting = await configMaps.get("a");
    const boom = new Error("cloud API down");
    const { handlers } = recording({ fail: boom });
    const err = await finalizer(configMaps, F, deleting, handlers).catch((e) => e);
    assert.equal(err, boom, "the cleanup's own error");
    assert.equal(patches(server).length, 0, "the finalizer is not touched");
    assert.deepEqual(server.get(cmRef("a"))?.metadata.finalizers, [F]);
    // a later reconcile cleans up again and succeeds
    const done = await finalizer(configMaps, F, deleting, recording().handlers);
    assert.equal(done.action, "cleaned-up");
    assert.equal(server.get(cmRef("a")), undefined);
  } finally {
    await server.close();
  }
});

test("finalizer: a change of the finalizers between read and removal conflicts (typed) and removes nothing", async () => {
  const { server, configMaps, create } = await setup();
  try {
    create("a", [OTHER, F]);
    server.delete(cmRef("a"));
    const read = await configMaps.get("a");
    // the other controller removes its finalizer meanwhile: ours moves from index 1 to 0
    const now = server.get(cmRef("a"))!;
    server.update({ ...now, metadata: { ...now.metadata, finalizers: [F] } });
    const { calls, handlers } = recording();
    const err = await finalizer(configMaps, F, read, handlers).catch((e) => e);
    assert.ok(err instanceof FinalizerConflictError, String(err));
    assert.equal(err.step, "remove");
    assert.equal(err.finalizer, F);
    assert.equal(err.code, 422);
    assert.ok(isConflict(err));
    assert.match(err.message, /^finalizer example\.com\/cleanup: removing it conflicted/);
    assert.equal(calls.length, 1, "cleanup ran; the removal lost the race");
    assert.deepEqual(server.get(cmRef("a"))?.metadata.finalizers, [F], "still there");
    // retried with the object as it is now
    const done = await finalizer(configMaps, F, await configMaps.get("a"), handlers);
    assert.equal(done.action, "cleaned-up");
    assert.equal(server.get(cmRef("a")), undefined);
  } finally {
    await server.close();
  }
});

test("finalizer: any change between read and add conflicts (typed) and adds nothing", async () => {
  const { server, configMaps, create } = await setup();
  try {
    const read = create("a");
    server.update({ ...read, metadata: { ...read.metadata, labels: { x: "y" } } });
    const err = await finalizer(configMaps, F, read, recording().handlers).catch((e) => e);
    assert.ok(err instanceof FinalizerConflictError, String(err));
    assert.equal(err.step, "add");
    assert.equal(server.get(cmRef("a"))?.metadata.finalizers, undefined);
    // its deletion began meanwhile: never added either
    const b = create("b", [OTHER]);
    server.delete(cmRef("b"));
    const errB = await finalizer(configMaps, F, b, recording().handlers).catch((e) => e);
    assert.ok(errB instanceof FinalizerConflictError);
    assert.deepEqual(server.get(cmRef("b"))?.metadata.finalizers, [OTHER]);
    // the retry with the current object does nothing
    const retry = await finalizer(configMaps, F, await configMaps.get("b"), recording().handlers);
    assert.deepEqual(retry, { action: "deleted" });
  } finally {
    await server.close();
  }
});

test("finalizer removes only its own finalizer: the object stays until the other one goes", async () => {
  const { server, configMaps, create } = await setup();
  try {
    create("a", [OTHER, F, "third.io/z"]);
    await configMaps.delete("a");
    const done = await finalizer(configMaps, F, await configMaps.get("a"), recording().handlers);
    assert.equal(done.action, "cleaned-up");
    const left = await configMaps.get("a");
    assert.deepEqual(left.metadata.finalizers, [OTHER, "third.io/z"]);
    assert.ok(left.metadata.deletionTimestamp);
    // our finalizer is gone, so the next reconcile does nothing
    const { calls, handlers } = recording();
    const before = server.requestCount;
    assert.deepEqual(await finalizer(configMaps, F, left, handlers), { action: "deleted" });
    assert.deepEqual(calls, [], "never re-added, never cleaned up twice");
    assert.equal(server.requestCount, before, "no request");
    // the others go: so does the object
    await configMaps.patch("a", { metadata: { finalizers: null } });
    assert.equal(server.get(cmRef("a")), undefined);
  } finally {
    await server.close();
  }
});

test("finalizer: a 404 when removing after cleanup is success (the object is already gone)", async () => {
  const { server, configMaps, create } = await setup();
  try {
    create("a", [F]);
    server.delete(cmRef("a"));
    const read = await configMaps.get("a");
    // someone forces it away meanwhile
    const now = server.get(cmRef("a"))!;
    server.update({ ...now, metadata: { ...now.metadata, finalizers: [] } });
    assert.equal(server.get(cmRef("a")), undefined);
    const done = await finalizer(configMaps, F, read, recording().handlers);
    assert.deepEqual(done, { action: "cleaned-up", value: "cleaned!" });
    // and an object that vanished before its finalizer was added needs nothing
    const b = create("b");
    server.delete(cmRef("b"));
    assert.deepEqual(await finalizer(configMaps, F, b, recording().handlers), {
      action: "deleted",
    });
  } finally {
    await server.close();
  }
});

test("finalizer: other failures of the removal reject with the client's error", async () => {
  const { server, configMaps, create } = await setup();
  try {
    create("a", [F]);
    server.delete(cmRef("a"));
    server.inject({ verb: "patch", fault: { kind: "status", code: 500 } });
    const err = await finalizer(configMaps, F, await configMaps.get("a"), recording().handlers)
      .catch((e) => e);
    assert.equal(err.code, 500);
    assert.ok(!(err instanceof FinalizerConflictError));
    assert.deepEqual(server.get(cmRef("a"))?.metadata.finalizers, [F]);
  } finally {
    await server.close();
  }
});

test("finalizer honours its signal: before any request, during a request, and in the handlers", async () => {
  const gate = gatedFetch();
  const { server, configMaps, create } = await setup(gate.fetch);
  try {
    // aborted on entry: nothing is sent, no handler runs
    const reason = new Error("stopping");
    const { calls, handlers } = recording();
    const a = create("a");
    const err = await finalizer(configMaps, F, a, handlers, { signal: AbortSignal.abort(reason) })
      .catch((e) => e);
    assert.equal(err, reason);
    assert.equal(gate.count, 0);

    // aborted while the add is in flight
    let onHeld = () => {};
    const held = new Promise<void>((resolve) => onHeld = resolve);
    gate.hold = (method) => {
      if (method !== "PATCH") return false;
      onHeld();
      return true;
    };
    const ac = new AbortController();
    const adding = finalizer(configMaps, F, a, handlers, { signal: ac.signal }).catch((e) => e);
    await held;
    ac.abort(reason);
    assert.equal(await adding, reason);
    assert.equal(server.get(cmRef("a"))?.metadata.finalizers, undefined);
    gate.hold = () => false;

    // the handlers get the signal; aborted during cleanup, the removal is not made
    create("b", [F]);
    server.delete(cmRef("b"));
    const stop = new AbortController();
    const seen: AbortSignal[] = [];
    const removing = await finalizer(configMaps, F, await configMaps.get("b"), {
      apply: () => "",
      cleanup: (_obj, { signal }) => {
        seen.push(signal);
        stop.abort(reason);
        return "";
      },
    }, { signal: stop.signal }).catch((e) => e);
    assert.equal(removing, reason);
    assert.equal(seen[0], stop.signal);
    assert.deepEqual(server.get(cmRef("b"))?.metadata.finalizers, [F], "kept: cleanup runs again");
    assert.deepEqual(calls, []);
  } finally {
    gate.release();
    await server.close();
  }
});

test("finalizer patches in the object's namespace with a client for every namespace", async () => {
  const { server, client, create } = await setup();
  try {
    const all = resourceClient<KubeObject>(client, { apiVersion: "v1", resource: "configmaps" });
    const obj = create("a");
    const done = await finalizer(all, F, obj, recording().handlers);
    assert.equal(done.action, "added");
    assert.equal(patches(server)[0].path, "/api/v1/namespaces/fx/configmaps/a");
  } finally {
    await server.close();
  }
});

test("finalizer refuses a name that is no qualified name, an object without name, missing handlers", async () => {
  const { server, configMaps, create } = await setup();
  try {
    const obj = create("a");
    const { handlers } = recording();
    for (const name of ["", "a/b/c", "Example.com/x", "example.com/", 42 as unknown as string]) {
      await assert.rejects(finalizer(configMaps, name, obj, handlers), TypeError, String(name));
    }
    await assert.rejects(finalizer(configMaps, F, { metadata: {} }, handlers), TypeError);
    await assert.rejects(
      finalizer(configMaps, F, obj, { apply: () => 1 } as unknown as typeof handlers),
      TypeError,
    );
    const { resourceVersion: _rv, ...noVersion } = obj.metadata;
    await assert.rejects(finalizer(configMaps, F, { metadata: noVersion }, handlers), TypeError);
    assert.equal(server.requestCount, 0);
  } finally {
    await server.close();
  }
});
