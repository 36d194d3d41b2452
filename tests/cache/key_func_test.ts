import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import { KeyError } from "../../src/cache/key_error.ts";
import {
  deletionHandlingMetaNamespaceKeyFunc,
  metaNamespaceKeyFunc,
  splitMetaNamespaceKey,
} from "../../src/cache/key_func.ts";

test("metaNamespaceKeyFunc keys namespaced objects as namespace/name", () => {
  const obj = { kind: "ConfigMap", metadata: { name: "cm1", namespace: "default" } };
  assert.equal(metaNamespaceKeyFunc(obj), "default/cm1");
});

test("metaNamespaceKeyFunc keys cluster-scoped objects by name alone", () => {
  assert.equal(metaNamespaceKeyFunc({ kind: "Node", metadata: { name: "node-1" } }), "node-1");
  assert.equal(metaNamespaceKeyFunc({ metadata: { name: "node-1", namespace: "" } }), "node-1");
});

test("metaNamespaceKeyFunc returns a tombstone's key", () => {
  const stale = { metadata: { name: "other", namespace: "elsewhere" } };
  const tombstone = new DeletedFinalStateUnknown("default/cm1", stale);
  assert.equal(metaNamespaceKeyFunc(tombstone), "default/cm1");
});

test("deletionHandlingMetaNamespaceKeyFunc keys objects and tombstones alike", () => {
  const obj = { metadata: { name: "cm1", namespace: "default" } };
  assert.equal(deletionHandlingMetaNamespaceKeyFunc(obj), "default/cm1");
  const tombstone = new DeletedFinalStateUnknown("default/cm1", obj);
  assert.equal(deletionHandlingMetaNamespaceKeyFunc(tombstone), "default/cm1");
});

test("metaNamespaceKeyFunc throws a KeyError naming kind and namespace when the name is missing", () => {
  const obj = { kind: "ConfigMap", metadata: { namespace: "default", generateName: "cm-" } };
  assert.throws(() => metaNamespaceKeyFunc(obj), (err: unknown) => {
    assert.ok(err instanceof KeyError);
    assert.equal(
      err.message,
      'cannot compute the key of a ConfigMap in namespace "default": metadata.name is missing',
    );
    return true;
  });
  assert.throws(() => metaNamespaceKeyFunc({ metadata: { name: "" } }), KeyError);
});

test("metaNamespaceKeyFunc throws a KeyError for malformed objects", () => {
  const bad: unknown[] = [
    null,
    undefined,
    "default/cm1",
    42,
    {},
    { metadata: null },
    { metadata: "x" },
    { metadata: { name: 5 } },
    { metadata: { name: "a", namespace: 5 } },
    { metadata: { name: "a/b", namespace: "default" } },
  ];
  for (const obj of bad) {
    assert.throws(() => metaNamespaceKeyFunc(obj as KubeObject), KeyError, JSON.stringify(obj));
  }
});

test("metaNamespaceKeyFunc messages do not quote object content", () => {
  const secret = { kind: "Secret", metadata: { namespace: "ns" }, data: { token: "hunter2" } };
  assert.throws(() => metaNamespaceKeyFunc(secret), (err: unknown) => {
    assert.ok(err instanceof KeyError);
    assert.ok(!err.message.includes("hunter2"));
    return true;
  });
});

test("splitMetaNamespaceKey splits namespace/name", () => {
  assert.deepEqual(splitMetaNamespaceKey("default/cm1"), { namespace: "default", name: "cm1" });
});

test("splitMetaNamespaceKey gives an empty namespace for a bare name", () => {
  assert.deepEqual(splitMetaNamespaceKey("node-1"), { namespace: "", name: "node-1" });
});

test("splitMetaNamespaceKey round-trips metaNamespaceKeyFunc", () => {
  for (const metadata of [{ name: "a", namespace: "ns" }, { name: "b" }]) {
    const { namespace, name } = splitMetaNamespaceKey(metaNamespaceKeyFunc({ metadata }));
    assert.equal(name, metadata.name);
    assert.equal(namespace, metadata.namespace ?? "");
  }
});

test("splitMetaNamespaceKey throws a TypeError on bad keys", () => {
  for (const key of ["", "a/b/c", "/name", "ns/", "/", "//"]) {
    assert.throws(() => splitMetaNamespaceKey(key), TypeError, key);
  }
  assert.throws(() => splitMetaNamespaceKey("a/b/c"), /invalid key "a\/b\/c"/);
  // @ts-expect-error: not a string
  assert.throws(() => splitMetaNamespaceKey(undefined), TypeError);
});
