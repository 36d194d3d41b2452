import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { DeletedFinalStateUnknown } from "../../src/cache/deleted_final_state_unknown.ts";
import type { InformerChange } from "../../src/informer/informer_change.ts";
import { InformerStore } from "../../src/informer/informer_store.ts";

// onChange is public and synchronous, and may change the store: replace and
// resync walk a snapshot, announce each object once, and skip what onChange
// removed or replaced meanwhile (that change announced itself).

const cm = (name: string, rv = "1", namespace = "ns"): KubeObject => ({
  metadata: { name, namespace, resourceVersion: rv },
});

/** A store whose onChange records each change as a line, then calls `react` (guarded against endless walks). */
function reacting(
  react: (c: InformerChange<KubeObject>, store: InformerStore<KubeObject>) => void,
) {
  const seen: string[] = [];
  const store: InformerStore<KubeObject> = new InformerStore<KubeObject>({
    onChange: (c) => {
      if (seen.length > 50) throw new Error("endless walk");
      if (c.type === "synced") seen.push("synced");
      else if (c.type === "add") seen.push(`add ${c.key}${c.isInInitialList ? " initial" : ""}`);
      else if (c.type === "update") {
        seen.push(`${c.oldObject === c.object ? "sync" : "update"} ${c.key}`);
      } else {
        seen.push(
          `${c.object instanceof DeletedFinalStateUnknown ? "tombstone" : "delete"} ${c.key}`,
        );
      }
      react(c, store);
    },
  });
  return { store, seen };
}

test("InformerStore.resync announces each object once when onChange deletes and re-adds it", () => {
  let refreshing = true;
  const { store, seen } = reacting((c, s) => {
    if (c.type !== "update" || !refreshing) return;
    s.delete(c.object); // (a delete then an add moves the entry to its namespace's end)
    s.add(c.object);
  });
  store.replace([cm("a"), cm("b"), cm("c", "1", "other")], "1");
  seen.length = 0;
  store.resync();
  refreshing = false;
  assert.deepEqual(seen, [
    "sync ns/a",
    "delete ns/a",
    "add ns/a",
    "sync ns/b",
    "delete ns/b",
    "add ns/b",
    "sync other/c",
    "delete other/c",
    "add other/c",
  ]);
  assert.deepEqual(store.listKeys().sort(), ["ns/a", "ns/b", "other/c"]);
});

test("InformerStore.resync skips an object onChange deleted or replaced before its turn", () => {
  const { store, seen } = reacting((c, s) => {
    if (c.type === "update" && c.key === "ns/a") {
      s.delete(cm("b"));
      s.update(cm("c", "2"));
    }
  });
  store.replace([cm("a"), cm("b"), cm("c"), cm("d")], "1");
  seen.length = 0;
  store.resync();
  assert.deepEqual(seen, ["sync ns/a", "delete ns/b", "update ns/c", "sync ns/d"]);
});

test("InformerStore.replace announces an object onChange adds during the walk once", () => {
  const { store, seen } = reacting((c, s) => {
    if (c.type === "add" && c.key === "ns/a") s.add(cm("a-companion"));
  });
  store.replace([cm("a"), cm("b")], "1");
  assert.deepEqual(seen, ["add ns/a initial", "add ns/a-companion", "add ns/b initial", "synced"]);
  assert.equal(store.size, 3);
});

test("InformerStore.replace: what onChange deletes or stores again during the walk is not announced twice", () => {
  let react = false;
  const { store, seen } = reacting((c, s) => {
    if (!react || c.type !== "update" || c.key !== "ns/a") return;
    s.delete(cm("b")); // listed again, changed: its update is not announced after its delete
    s.delete(cm("new")); // new in this list, already cached: its delete is announced, no add after it
    s.add(cm("gone", "3")); // vanished from this list, stored again: no tombstone
  });
  store.replace([cm("a"), cm("b"), cm("gone")], "1");
  seen.length = 0;
  react = true;
  store.replace([cm("a", "2"), cm("b", "2"), cm("new", "2")], "2");
  assert.deepEqual(seen, ["update ns/a", "delete ns/b", "delete ns/new", "add ns/gone"]);
  assert.deepEqual(store.listKeys().sort(), ["ns/a", "ns/gone"]);
});

test("InformerStore.replace and resync with an onChange that changes nothing announce everything, in list order", () => {
  const { store, seen } = reacting(() => {});
  store.replace([cm("a"), cm("b", "1", "x"), cm("c")], "1");
  store.replace([cm("a", "2"), cm("c"), cm("d")], "2");
  store.resync();
  assert.deepEqual(seen, [
    "add ns/a initial",
    "add ns/c initial",
    "add x/b initial",
    "synced",
    "update ns/a",
    "add ns/d",
    "tombstone x/b",
    "sync ns/a",
    "sync ns/c",
    "sync ns/d",
  ]);
});
