import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../src/api/types.ts";
import { HandlerQueue, type Notification } from "../../src/informer/_handler_queue.ts";

let seq = 0;
const o = (name: string, rv: string): KubeObject => ({ metadata: { name, resourceVersion: rv } });
const add = (k: string, rv: string): Notification<KubeObject> => ({
  type: "add",
  key: k,
  object: o(k, rv),
  initial: false,
  seq: ++seq,
});
const initialAdd = (k: string, rv: string): Notification<KubeObject> => ({
  type: "add",
  key: k,
  object: o(k, rv),
  initial: true,
  seq: ++seq,
});
const upd = (k: string, from: string, to: string): Notification<KubeObject> => ({
  type: "update",
  key: k,
  oldObject: o(k, from),
  object: o(k, to),
  seq: ++seq,
});
const del = (k: string, rv: string): Notification<KubeObject> => ({
  type: "delete",
  key: k,
  object: o(k, rv),
  seq: ++seq,
});

function drain(q: HandlerQueue<KubeObject>): string[] {
  const out: string[] = [];
  for (let n = q.shift(); n; n = q.shift()) {
    const rv = (x: KubeObject) => x.metadata.resourceVersion;
    if (n.type === "update") out.push(`update ${n.key} ${rv(n.oldObject)}->${rv(n.object)}`);
    else out.push(`${n.type} ${n.key} ${rv(n.object as KubeObject)}`);
  }
  return out;
}

test("handler queue keeps every notification in order up to its limit", () => {
  const q = new HandlerQueue<KubeObject>(4);
  for (const n of [add("a", "1"), upd("a", "1", "2"), upd("a", "2", "3"), del("a", "4")]) {
    assert.equal(q.push(n), false);
  }
  assert.equal(q.coalescing, false);
  assert.equal(q.length, 4);
  assert.deepEqual(drain(q), ["add a 1", "update a 1->2", "update a 2->3", "delete a 4"]);
  assert.equal(q.length, 0);
});

test("handler queue past its limit coalesces per object, keeping the latest state and every delete", () => {
  const q = new HandlerQueue<KubeObject>(3);
  q.push(upd("a", "1", "2")); // the handler saw a@1
  q.push(add("b", "5"));
  q.push(upd("a", "2", "3"));
  assert.equal(q.push(add("c", "7")), true, "the fourth push starts coalescing");
  assert.equal(q.coalescing, true);
  q.push(del("a", "9")); // a was seen: its delete must survive
  q.push(add("a", "10")); // recreated: delete then add
  q.push(del("c", "11")); // c never reached the handler: nothing to say
  q.push(upd("b", "5", "12"));
  assert.equal(q.length, 3);
  assert.deepEqual(drain(q), ["delete a 9", "add a 10", "add b 12"]);
  assert.equal(q.coalescing, false, "back to exact order once drained");
  q.push(add("d", "13"));
  assert.deepEqual(drain(q), ["add d 13"]);
});

test("handler queue merges updates into one update from the first old to the last new", () => {
  const q = new HandlerQueue<KubeObject>(1);
  q.push(upd("a", "1", "2"));
  q.push(upd("a", "2", "3"));
  q.push(upd("a", "3", "4"));
  assert.deepEqual(drain(q), ["update a 1->4"]);
});

test("handler queue reports the seq of its head, Infinity when empty", () => {
  const q = new HandlerQueue<KubeObject>(1);
  assert.equal(q.headSeq, Infinity);
  const first = add("a", "1");
  q.push(first);
  q.push(add("b", "1"));
  assert.equal(q.headSeq, first.seq);
  q.clear();
  assert.equal(q.length, 0);
  assert.equal(q.headSeq, Infinity);
});

test("handler queue stays compact over a long run of pushes and shifts", () => {
  const q = new HandlerQueue<KubeObject>(10_000);
  for (let i = 0; i < 5000; i++) {
    q.push(add(`k${i}`, "1"));
    if (i % 2) q.shift();
  }
  assert.equal(q.length, 2500);
  assert.equal(drain(q).length, 2500);
});

test("handler queue keeps an initial list in order whatever its length: its adds do not count toward the limit", () => {
  const q = new HandlerQueue<KubeObject>(2);
  for (let i = 0; i < 5; i++) assert.equal(q.push(initialAdd(`i${i}`, "1")), false);
  assert.equal(q.coalescing, false, "five initial adds over a limit of 2");
  q.push(upd("i0", "1", "2"));
  q.push(upd("i1", "1", "2"));
  assert.equal(q.coalescing, false, "two other notifications: at the limit");
  assert.equal(q.push(upd("i0", "2", "3")), true, "the third other one starts coalescing");
  assert.deepEqual(drain(q), [
    "add i0 3", // the add not yet delivered carries the newest state
    "add i1 2",
    "add i2 1",
    "add i3 1",
    "add i4 1",
  ]);
  assert.equal(q.coalescing, false);
  // delivered initial adds no longer count: the limit applies to what waits
  for (let i = 0; i < 3; i++) q.push(initialAdd(`j${i}`, "1"));
  q.shift();
  q.shift();
  q.push(upd("x", "1", "2"));
  q.push(upd("y", "1", "2"));
  assert.equal(q.coalescing, false);
  assert.equal(q.push(upd("z", "1", "2")), true);
});

test("a coalescing queue drains in linear time: one Map iterator for the whole drain, not one per change (a Map steps over every entry deleted from its front)", () => {
  const q = new HandlerQueue<KubeObject>(100);
  for (let i = 0; i < 10_000; i++) {
    q.push({
      type: "add",
      key: `k${i}`,
      object: { metadata: { name: `k${i}` } },
      initial: false,
      seq: i,
    });
  }
  assert.ok(q.coalescing);
  const proto = Map.prototype as unknown as Record<PropertyKey, (...a: unknown[]) => unknown>;
  const names = ["entries", "values", "keys", Symbol.iterator] as const;
  const saved = names.map((name) => proto[name]);
  let iterators = 0;
  names.forEach((name, i) => {
    proto[name] = function (this: unknown, ...a: unknown[]) {
      iterators++;
      return saved[i].apply(this, a);
    };
  });
  const seqs: number[] = [];
  try {
    while (q.headSeq !== Infinity) seqs.push(q.shift()!.seq);
  } finally {
    names.forEach((name, i) => (proto[name] = saved[i]));
  }
  assert.equal(seqs.length, 10_000);
  assert.ok(seqs.every((s, i) => s === i), "in order");
  assert.ok(iterators <= 2, `${iterators} Map iterators for 10,000 changes`);
});
