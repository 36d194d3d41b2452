import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { dropManagedFields } from "../../src/informer/transform.ts";

test("dropManagedFields removes metadata.managedFields and keeps everything else", () => {
  const obj = {
    kind: "Pod",
    metadata: { name: "p", managedFields: [{ manager: "kubelet" }], labels: { a: "b" } },
    spec: {},
  };
  const out = dropManagedFields(obj);
  assert.equal(out, obj, "in place");
  assert.deepEqual(out, { kind: "Pod", metadata: { name: "p", labels: { a: "b" } }, spec: {} });
  assert.deepEqual(dropManagedFields({ metadata: { name: "q" } }), { metadata: { name: "q" } });
});

test("dropManagedFields gives the object a new metadata rather than deleting a property (a delete leaves V8 a dictionary object: more memory)", () => {
  const metadata = { name: "p", uid: "u", managedFields: [{ manager: "kubelet" }] };
  const obj = { metadata };
  dropManagedFields(obj);
  assert.notEqual(obj.metadata, metadata, "a new metadata object");
  assert.ok(!("managedFields" in obj.metadata));
  assert.deepEqual(Object.keys(obj.metadata), ["name", "uid"], "the other fields, in order");
  assert.equal(metadata.managedFields.length, 1, "the original metadata is left as it was");
});
