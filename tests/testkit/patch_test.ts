/** The fake API server's PATCH (merge, JSON, strategic, apply), delete preconditions and dryRun. */
import assert from "node:assert/strict";
import { jsonPatch, mergePatch, PatchError } from "../../src/testkit/_patch.ts";
import { test } from "../_test.ts";
import { configMap, withServer } from "./_helpers.ts";

const A = "/api/v1/namespaces/fx/configmaps/a";

function sender(url: string) {
  return async (method: string, path: string, body?: unknown, contentType?: string) => {
    const headers: Record<string, string> = {};
    if (contentType) headers["Content-Type"] = contentType;
    const res = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
}

test("mergePatch follows RFC 7386", () => {
  assert.deepEqual(
    mergePatch({ a: "b", c: { d: "e", f: "g" }, l: [1, 2] }, { a: "z", c: { f: null }, l: [3] }),
    { a: "z", c: { d: "e" }, l: [3] },
  );
  assert.deepEqual(mergePatch({ a: 1 }, { b: { c: null } }), { a: 1, b: {} });
  assert.deepEqual(mergePatch("x", { a: 1 }), { a: 1 });
});

test("jsonPatch follows RFC 6902 and fails as a whole", () => {
  const doc = { a: { b: [1, 2, 3] }, "x/y": 1, "t~": 2 };
  assert.deepEqual(
    jsonPatch(doc, [
      { op: "add", path: "/a/b/1", value: 9 },
      { op: "add", path: "/a/b/-", value: 4 },
      { op: "remove", path: "/x~1y" },
      { op: "copy", from: "/t~0", path: "/c" },
      { op: "move", from: "/a/b/0", path: "/first" },
      { op: "test", path: "/c", value: 2 },
    ]),
    { a: { b: [9, 2, 3, 4] }, "t~": 2, c: 2, first: 1 },
  );
  assert.deepEqual(doc, { a: { b: [1, 2, 3] }, "x/y": 1, "t~": 2 }, "the input is untouched");
  const fails = (ops: unknown, code: number) =>
    assert.throws(() => jsonPatch(doc, ops), (e) => e instanceof PatchError && e.code === code);
  fails([{ op: "test", path: "/a/b/0", value: 2 }], 422);
  fails([{ op: "remove", path: "/nope" }], 422);
  fails([{ op: "replace", path: "/a/b/7", value: 1 }], 422);
  fails([{ op: "add", path: "/no/such", value: 1 }], 422);
  fails([{ op: "frobnicate", path: "/a" }], 400);
  fails([{ op: "add", path: "a", value: 1 }], 400);
  fails({ op: "add" }, 400);
});

test("PATCH applies merge, JSON and strategic patches and records the content type", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const a = server.create(configMap("a", "fx", { data: { k: "1", j: "2" } }));
    const merge = await send("PATCH", A, { data: { j: null } }, "application/merge-patch+json");
    assert.equal(merge.status, 200);
    assert.deepEqual(merge.body.data, { k: "1" });
    assert.equal(
      merge.body.metadata.resourceVersion,
      String(Number(a.metadata.resourceVersion) + 1),
    );
    assert.equal(merge.body.metadata.uid, a.metadata.uid);
    const json = await send(
      "PATCH",
      A,
      [{ op: "add", path: "/data/n", value: "3" }],
      "application/json-patch+json",
    );
    assert.deepEqual(json.body.data, { k: "1", n: "3" });
    const smp = await send(
      "PATCH",
      A,
      { data: { k: "0" } },
      "application/strategic-merge-patch+json; charset=utf-8",
    );
    assert.deepEqual(smp.body.data, { k: "0", n: "3" });
    assert.deepEqual(server.requests.map((r) => [r.verb, r.contentType]), [
      ["patch", "application/merge-patch+json"],
      ["patch", "application/json-patch+json"],
      ["patch", "application/strategic-merge-patch+json; charset=utf-8"],
    ]);
    const inject = server.inject({ verb: "patch", fault: { kind: "status", code: 500 } });
    assert.equal((await send("PATCH", A, {}, "application/merge-patch+json")).status, 500);
    assert.equal(inject.fired, 1, "faults can target patches");
  });
});

test("PATCH answers 415 for a content type that is no patch, and for strategic patches of custom resources", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    server.create(configMap("a"));
    const plain = await send("PATCH", A, { data: {} }, "application/json");
    assert.equal(plain.status, 415);
    assert.equal(plain.body.reason, "UnsupportedMediaType");
    assert.match(plain.body.message, /strategic-merge-patch/);
    server.addResource({
      group: "example.com",
      version: "v1",
      resource: "widgets",
      kind: "Widget",
      namespaced: true,
    });
    server.create({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "fx" },
    });
    const w = "/apis/example.com/v1/namespaces/fx/widgets/w";
    const smp = await send("PATCH", w, { spec: {} }, "application/strategic-merge-patch+json");
    assert.equal(smp.status, 415);
    assert.doesNotMatch(smp.body.message, /strategic/);
    assert.equal(
      (await send("PATCH", w, { spec: { x: 1 } }, "application/merge-patch+json")).status,
      200,
    );
  });
});

test("PATCH errors: missing object 404, bad JSON 400, failed JSON patch 422, renaming 400, stale version 409", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const MERGE = "application/merge-patch+json";
    assert.equal((await send("PATCH", A, {}, MERGE)).status, 404);
    const a = server.create(configMap("a"));
    assert.equal((await send("PATCH", A, "{not json", MERGE)).status, 400);
    assert.equal((await send("PATCH", A, [1], MERGE)).status, 400);
    const failed = await send(
      "PATCH",
      A,
      [{ op: "test", path: "/kind", value: "Pod" }],
      "application/json-patch+json",
    );
    assert.equal(failed.status, 422);
    assert.equal(failed.body.reason, "Invalid");
    assert.equal((await send("PATCH", A, { metadata: { name: "b" } }, MERGE)).status, 400);
    server.update({ ...a, data: { k: "1" } });
    const stale = await send("PATCH", A, {
      metadata: { resourceVersion: a.metadata.resourceVersion },
    }, MERGE);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, "Conflict");
  });
});

test("server-side apply needs fieldManager (422), creates with 201, then merges with 200", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const APPLY = "application/apply-patch+yaml";
    const body = configMap("a", "fx", { data: { k: "1" } });
    const missing = await send("PATCH", A, body, APPLY);
    assert.equal(missing.status, 422);
    assert.match(missing.body.message, /fieldManager: Required value/);
    const created = await send("PATCH", `${A}?fieldManager=me`, body, APPLY);
    assert.equal(created.status, 201);
    assert.equal(created.body.metadata.namespace, "fx");
    const merged = await send(
      "PATCH",
      `${A}?fieldManager=me&force=true`,
      configMap("a", "fx", { data: { j: "2" } }),
      APPLY,
    );
    assert.equal(merged.status, 200);
    assert.deepEqual(merged.body.data, { k: "1", j: "2" });
    const renamed = await send("PATCH", `${A}?fieldManager=me`, configMap("b"), APPLY);
    assert.equal(renamed.status, 400);
    const yaml = await send("PATCH", `${A}?fieldManager=me`, "data:\n  k: v\n", APPLY);
    assert.equal(yaml.status, 400, "JSON bodies only");
    assert.match(yaml.body.message, /JSON only/);
  });
});

test("DELETE honours preconditions (409) and dryRun=All stores nothing", async () => {
  await withServer({}, async (server) => {
    const send = sender(server.url);
    const a = server.create(configMap("a"));
    const uid = await send("DELETE", A, { preconditions: { uid: "other" } });
    assert.equal(uid.status, 409);
    assert.equal(uid.body.reason, "Conflict");
    assert.match(
      uid.body.message,
      /Precondition failed: UID in precondition: other, UID in object meta: /,
    );
    assert.equal((await send("DELETE", A, "{bad")).status, 400);
    const dryPut = await send("PUT", `${A}?dryRun=All`, { ...a, data: { k: "1" } });
    assert.equal(dryPut.status, 200);
    assert.deepEqual(dryPut.body.data, { k: "1" });
    assert.equal(dryPut.body.metadata.resourceVersion, a.metadata.resourceVersion);
    const dryPost = await send(
      "POST",
      "/api/v1/namespaces/fx/configmaps?dryRun=All",
      configMap("b"),
    );
    assert.equal(dryPost.status, 201);
    assert.equal(dryPost.body.metadata.resourceVersion, undefined);
    assert.equal((await send("DELETE", `${A}?dryRun=All`)).status, 200);
    assert.equal(server.resourceVersion, a.metadata.resourceVersion, "nothing written");
    assert.deepEqual(server.get(a)?.data, undefined);
    const ok = await send("DELETE", A, {
      preconditions: { uid: a.metadata.uid, resourceVersion: a.metadata.resourceVersion },
    });
    assert.equal(ok.status, 200);
    assert.equal(server.get(a), undefined);
  });
});
