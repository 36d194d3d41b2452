/** Finalizer semantics of the fake API server: DELETE marks, an update that empties finalizers deletes. */
import assert from "node:assert/strict";
import {
  deletionFieldsForUpdate,
  endsDeletion,
  markAsDeleting,
} from "../../src/testkit/_deletion.ts";
import type { ObjectMeta } from "../../src/api/types.ts";
import { DEFAULT_RESOURCES } from "../../src/testkit/_resources.ts";
import { test } from "../_test.ts";
import { configMap, LineReader, withServer } from "./_helpers.ts";

const FX = "/api/v1/namespaces/fx/configmaps";
const A = `${FX}/a`;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function sender(url: string) {
  return async (method: string, path: string, body?: unknown, contentType?: string) => {
    const headers: Record<string, string> = {};
    if (contentType) headers["Content-Type"] = contentType;
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
}

const JSON_PATCH = "application/json-patch+json";
const MERGE_PATCH = "application/merge-patch+json";
/** A ConfigMap in fx with these metadata fields besides name and namespace. */
function cm(name: string, meta: ObjectMeta, extra: Record<string, unknown> = {}) {
  return { ...configMap(name), metadata: { name, namespace: "fx", ...meta }, ...extra };
}

const summary = (
  e: { type: string; object: { metadata: { name?: string; resourceVersion?: string } } },
) => `${e.type} ${e.object.metadata.name ?? ""}@${e.object.metadata.resourceVersion}`;

test("markAsDeleting sets deletionTimestamp once, grace 0, and bumps a generation above 0", () => {
  const now = "2026-01-02T03:04:05Z";
  const fresh = { metadata: { name: "a", finalizers: ["x/y"], generation: 3 } };
  assert.deepEqual(markAsDeleting(fresh, now)?.metadata, {
    name: "a",
    finalizers: ["x/y"],
    generation: 4,
    deletionTimestamp: now,
    deletionGracePeriodSeconds: 0,
  });
  assert.equal(markAsDeleting({ metadata: { name: "a" } }, now)?.metadata.generation, undefined);
  const marked = markAsDeleting(fresh, now)!;
  assert.equal(markAsDeleting(marked, "2030-01-01T00:00:00Z"), undefined, "already marked");
});

test("deletionFieldsForUpdate keeps the stored deletion fields and refuses new finalizers", () => {
  const cm = DEFAULT_RESOURCES.find((r) => r.resource === "configmaps")!;
  const deploy = DEFAULT_RESOURCES.find((r) => r.resource === "deployments")!;
  const deleting = {
    name: "a",
    finalizers: ["x/a", "x/b"],
    deletionTimestamp: "2026-01-01T00:00:00Z",
    deletionGracePeriodSeconds: 0,
  };
  const rows: Array<[string, ObjectMeta, ObjectMeta, ObjectMeta | string]> = [
    ["kept from the stored object", deleting, { name: "a", finalizers: ["x/a"] }, {
      name: "a",
      finalizers: ["x/a"],
      deletionTimestamp: "2026-01-01T00:00:00Z",
      deletionGracePeriodSeconds: 0,
    }],
    ["a changed timestamp is ignored", deleting, {
      name: "a",
      finalizers: ["x/b", "x/a"],
      deletionTimestamp: "2030-01-01T00:00:00Z",
    }, {
      name: "a",
      finalizers: ["x/b", "x/a"],
      deletionTimestamp: "2026-01-01T00:00:00Z",
      deletionGracePeriodSeconds: 0,
    }],
    [
      "a new finalizer is forbidden",
      deleting,
      { name: "a", finalizers: ["x/a", "x/c", "x/0"] },
      'ConfigMap "a" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added ' +
      'if the object is being deleted, found new finalizers []string{"x/0", "x/c"}',
    ],
    ["no deletion, no change", { name: "a" }, { name: "a", finalizers: ["x/a"] }, {
      name: "a",
      finalizers: ["x/a"],
    }],
    [
      "deletionTimestamp cannot be set by an update",
      { name: "a" },
      { name: "a", deletionTimestamp: "2026-01-01T00:00:00Z" },
      'ConfigMap "a" is invalid: metadata.deletionTimestamp: Invalid value: ' +
      '"2026-01-01T00:00:00Z": field is immutable',
    ],
    [
      "nor deletionGracePeriodSeconds changed",
      deleting,
      { name: "a", finalizers: ["x/a"], deletionGracePeriodSeconds: 30 },
      'ConfigMap "a" is invalid: metadata.deletionGracePeriodSeconds: Invalid value: 30: ' +
      "field is immutable",
    ],
  ];
  for (const [name, existing, input, expected] of rows) {
    if (typeof expected === "string") {
      assert.throws(() => deletionFieldsForUpdate(cm, existing, input), (err: unknown) => {
        const e = err as { code: number; status: { message: string; reason: string } };
        assert.equal(e.code, 422, name);
        assert.equal(e.status.reason, "Invalid", name);
        assert.equal(e.status.message, expected, name);
        return true;
      });
    } else {
      assert.deepEqual(deletionFieldsForUpdate(cm, existing, input), expected, name);
    }
  }
  assert.throws(
    () => deletionFieldsForUpdate(deploy, deleting, { name: "a", finalizers: ["n"] }),
    (e: { status: { message: string; details: { group: string; kind: string } } }) =>
      e.status.message.startsWith('Deployment.apps "a" is invalid') &&
      e.status.details.group === "apps" && e.status.details.kind === "Deployment",
  );
});

test("endsDeletion only for an object being deleted that is left without finalizers", () => {
  const deleting = { deletionTimestamp: "2026-01-01T00:00:00Z", deletionGracePeriodSeconds: 0 };
  assert.equal(endsDeletion(deleting, { finalizers: [] }), true);
  assert.equal(endsDeletion(deleting, {}), true);
  assert.equal(endsDeletion(deleting, { finalizers: ["x/a"] }), false);
  assert.equal(endsDeletion({}, { finalizers: [] }), false);
  assert.equal(endsDeletion({ ...deleting, deletionGracePeriodSeconds: 30 }, {}), false);
});

test("DELETE of an object with finalizers marks it (200 with the object, MODIFIED); a second DELETE changes nothing", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const created = server.create(cm("a", { finalizers: ["example.com/x"], generation: 1 }));
    const res = await fetch(
      `${server.url}${FX}?watch=1&resourceVersion=${created.metadata.resourceVersion}`,
    );
    const reader = new LineReader(res);
    try {
      const first = await send("DELETE", A);
      assert.equal(first.status, 200);
      assert.equal(first.body.kind, "ConfigMap");
      const meta = first.body.metadata;
      assert.match(meta.deletionTimestamp, RFC3339);
      assert.equal(meta.deletionGracePeriodSeconds, 0);
      assert.equal(meta.generation, 2);
      assert.deepEqual(meta.finalizers, ["example.com/x"]);
      assert.equal(Number(meta.resourceVersion), Number(created.metadata.resourceVersion) + 1);
      assert.deepEqual(
        Object.keys(meta).slice(0, 9),
        [
          "name",
          "namespace",
          "uid",
          "resourceVersion",
          "generation",
          "creationTimestamp",
          "deletionTimestamp",
          "deletionGracePeriodSeconds",
          "finalizers",
        ],
        "the real server's field order",
      );
      const event = await reader.event();
      assert.equal(summary(event), `MODIFIED a@${meta.resourceVersion}`);
      assert.equal(event.object.metadata.deletionTimestamp, meta.deletionTimestamp);

      const rv = server.resourceVersion;
      const second = await send("DELETE", A);
      assert.equal(second.status, 200);
      assert.deepEqual(second.body, first.body, "nothing changes");
      assert.equal(server.resourceVersion, rv, "no write");
      assert.deepEqual(server.get(configMap("a"))?.metadata, meta);

      // dryRun marks nothing
      server.create(
        cm("b", { finalizers: ["example.com/x"] }),
      );
      const dry = await send("DELETE", `${FX}/b?dryRun=All`);
      assert.equal(dry.status, 200);
      assert.match(dry.body.metadata.deletionTimestamp, RFC3339);
      assert.equal(server.get(configMap("b"))?.metadata.deletionTimestamp, undefined);
    } finally {
      await reader.cancel();
    }
    await server.waitFor(() => server.openWatches === 0);
  });
});

test("a patch that removes the last finalizer of an object being deleted deletes it (DELETED)", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    server.create(
      cm("a", { finalizers: ["example.com/x", "example.com/y"] }, { data: { k: "v" } }),
    );
    const marked = (await send("DELETE", A)).body;
    const res = await fetch(
      `${server.url}${FX}?watch=1&resourceVersion=${marked.metadata.resourceVersion}`,
    );
    const reader = new LineReader(res);
    try {
      // one finalizer left: the object stays, with its deletionTimestamp
      const one = await send(
        "PATCH",
        A,
        [{ op: "remove", path: "/metadata/finalizers/0" }],
        JSON_PATCH,
      );
      assert.equal(one.status, 200);
      assert.deepEqual(one.body.metadata.finalizers, ["example.com/y"]);
      assert.equal(one.body.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
      assert.equal(
        summary(await reader.event()),
        `MODIFIED a@${one.body.metadata.resourceVersion}`,
      );

      // the last one: gone
      const last = await send("PATCH", A, { metadata: { finalizers: null } }, MERGE_PATCH);
      assert.equal(last.status, 200);
      assert.equal(last.body.metadata.name, "a");
      assert.equal(last.body.metadata.finalizers, undefined);
      const deleted = await reader.event();
      assert.equal(deleted.type, "DELETED");
      assert.equal(deleted.object.metadata.resourceVersion, server.resourceVersion);
      assert.deepEqual(
        deleted.object.metadata.finalizers,
        ["example.com/y"],
        "its last stored state",
      );
      assert.equal(server.get(configMap("a")), undefined);
      assert.equal((await send("GET", A)).status, 404);
    } finally {
      await reader.cancel();
    }
    await server.waitFor(() => server.openWatches === 0);
  });
});

test("a PUT that empties finalizers of an object being deleted deletes it; of one not being deleted, it only updates", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const a = server.create(
      cm("a", { finalizers: ["x.io/f"] }),
    );
    const kept = await send("PUT", A, { ...a, metadata: { ...a.metadata, finalizers: [] } });
    assert.equal(kept.status, 200);
    assert.ok(server.get(configMap("a")), "not being deleted: only updated");
    const withF = await send("PUT", A, {
      ...kept.body,
      metadata: { ...kept.body.metadata, finalizers: ["x.io/f"] },
    });
    const marked = (await send("DELETE", A)).body;
    assert.equal(
      marked.metadata.resourceVersion,
      String(Number(withF.body.metadata.resourceVersion) + 1),
    );
    const gone = await send("PUT", A, {
      ...marked,
      metadata: { ...marked.metadata, finalizers: [] },
    });
    assert.equal(gone.status, 200);
    assert.equal(server.get(configMap("a")), undefined);
    // a stale resourceVersion is still a conflict, not a deletion
    const b = server.create(
      cm("b", { finalizers: ["x.io/f"] }),
    );
    await send("DELETE", `${FX}/b`);
    const stale = await send("PUT", `${FX}/b`, {
      ...b,
      metadata: { ...b.metadata, finalizers: [] },
    });
    assert.equal(stale.status, 409);
    assert.ok(server.get(configMap("b")));
  });
});

test("no new finalizer on an object being deleted (422); deletionTimestamp cannot be set or changed by an update", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    server.create(cm("a", { finalizers: ["x.io/f"] }));
    const marked = (await send("DELETE", A)).body;
    const added = await send(
      "PATCH",
      A,
      [{ op: "add", path: "/metadata/finalizers/-", value: "x.io/g" }],
      JSON_PATCH,
    );
    assert.equal(added.status, 422);
    assert.equal(added.body.reason, "Invalid");
    assert.equal(
      added.body.message,
      'ConfigMap "a" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added ' +
        'if the object is being deleted, found new finalizers []string{"x.io/g"}',
    );
    assert.deepEqual(added.body.details.causes, [{
      reason: "FieldValueForbidden",
      message: "Forbidden: no new finalizers can be added if the object is being deleted, " +
        'found new finalizers []string{"x.io/g"}',
      field: "metadata.finalizers",
    }]);
    // a change of deletionTimestamp (or its removal) is ignored: the stored one stays
    for (const deletionTimestamp of ["2030-01-01T00:00:00Z", null]) {
      const moved = await send(
        "PATCH",
        A,
        { metadata: { deletionTimestamp }, data: { k: "v" } },
        MERGE_PATCH,
      );
      assert.equal(moved.status, 200);
      assert.equal(moved.body.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
      assert.equal(moved.body.metadata.deletionGracePeriodSeconds, 0);
    }
    // on an object not being deleted it cannot be set
    server.create(configMap("b"));
    const set = await send(
      "PATCH",
      `${FX}/b`,
      { metadata: { deletionTimestamp: "2026-01-01T00:00:00Z" } },
      MERGE_PATCH,
    );
    assert.equal(set.status, 422);
    assert.match(
      set.body.message,
      /metadata\.deletionTimestamp: Invalid value: .*field is immutable/,
    );
    assert.equal(server.get(configMap("b"))?.metadata.deletionTimestamp, undefined);
    // a create drops deletion fields, as the server wipes them
    const c = server.create(
      cm("c", { deletionTimestamp: "2026-01-01T00:00:00Z", deletionGracePeriodSeconds: 0 }),
    );
    assert.equal(c.metadata.deletionTimestamp, undefined);
    assert.equal(c.metadata.deletionGracePeriodSeconds, undefined);
  });
});

test("the test kit's delete() marks an object with finalizers and update() finishes it", async () => {
  await withServer({}, (server) => {
    server.create(cm("a", { finalizers: ["x.io/f"] }));
    const marked = server.delete(configMap("a"));
    assert.match(String(marked.metadata.deletionTimestamp), RFC3339);
    assert.ok(server.get(configMap("a")));
    server.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    assert.equal(server.get(configMap("a")), undefined);
    // without finalizers delete() deletes at once
    server.create(configMap("b"));
    server.delete(configMap("b"));
    assert.equal(server.get(configMap("b")), undefined);
  });
});
