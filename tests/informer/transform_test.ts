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
