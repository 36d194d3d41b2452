import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { ChangesSince } from "../../src/reflector/_changes_since.ts";
import { cm } from "./_scripted_lister_watcher.ts";

test("ChangesSince: net changes since the last save, each key once; what changed again after a save's snapshot stays a change", () => {
  const c = new ChangesSince();
  assert.equal(c.snapshot().since, undefined, "unknown before a checkpoint is loaded");
  c.record(cm("a", "1"), false);
  assert.deepEqual(c.snapshot().objects, [], "nothing recorded while unknown");
  c.restored("10");
  const a1 = cm("a", "11"), a2 = cm("a", "13"), b = cm("b", "12");
  c.record(a1, false);
  c.record(b, false);
  c.record(b, true);
  const taken = c.snapshot();
  assert.equal(taken.since, "10");
  assert.deepEqual(taken.objects, [["ns/a", a1], ["ns/b", undefined]]);
  c.record(a2, false); // after the snapshot, before the save ends
  c.saved(taken, "12");
  const next = c.snapshot();
  assert.equal(next.since, "12");
  assert.deepEqual(next.objects, [["ns/a", a2]], "b is saved; a changed again");
});

test("ChangesSince: a list replaces everything, so the next save is a snapshot, even if it was taken before the list", () => {
  const c = new ChangesSince();
  c.restored("10");
  c.record(cm("a", "11"), false);
  const taken = c.snapshot();
  c.listed();
  c.saved(taken, "11");
  assert.equal(c.snapshot().since, undefined);
  c.saved(c.snapshot(), "20");
  assert.equal(c.snapshot().since, "20");
  c.record({ metadata: {} } as never, false); // no name: no key to record it by
  assert.equal(c.snapshot().since, undefined);
});
