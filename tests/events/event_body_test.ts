import assert from "node:assert/strict";
import { test } from "../_test.ts";
import {
  contentOf,
  coreV1Body,
  eventName,
  eventsV1Body,
  truncateNote,
} from "../../src/events/_event_body.ts";
import type { EventDetails } from "../../src/events/event_details.ts";

const POD = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "web",
    namespace: "prod",
    uid: "u-1",
    resourceVersion: "7",
    labels: { a: "b" },
  },
};
const OK: EventDetails = { type: "Normal", reason: "Started", message: "ok" };

test("contentOf: the regarding reference holds apiVersion, kind, namespace, name, uid, resourceVersion and nothing else of the object", () => {
  const c = contentOf(POD, { ...OK, action: "Start" });
  assert.deepEqual(c, {
    type: "Normal",
    reason: "Started",
    action: "Start",
    note: "ok",
    regarding: {
      apiVersion: "v1",
      kind: "Pod",
      name: "web",
      namespace: "prod",
      uid: "u-1",
      resourceVersion: "7",
    },
  });
  assert.equal(contentOf(POD, OK).action, "Started", "action defaults to the reason");
  assert.equal(contentOf(POD, { type: "Warning", reason: "R", note: "n" }).note, "n");
  assert.equal(contentOf(POD, { type: "Warning", reason: "R" }).note, "");
});

const long = "x".repeat(129);
const invalid: [string, unknown, unknown, typeof TypeError | typeof RangeError][] = [
  ["no object", undefined, OK, TypeError],
  ["no metadata", { apiVersion: "v1", kind: "Pod" }, OK, TypeError],
  ["no name", { apiVersion: "v1", kind: "Pod", metadata: {} }, OK, TypeError],
  ["no kind (a list item)", { apiVersion: "v1", metadata: { name: "a" } }, OK, TypeError],
  ["no apiVersion", { kind: "Pod", metadata: { name: "a" } }, OK, TypeError],
  [
    "a namespace that is not a string",
    { ...POD, metadata: { name: "a", namespace: 1 } },
    OK,
    TypeError,
  ],
  ["no details", POD, undefined, TypeError],
  ["a type other than Normal/Warning", POD, { ...OK, type: "Error" }, TypeError],
  ["no type", POD, { reason: "R" }, TypeError],
  ["no reason", POD, { type: "Normal" }, TypeError],
  ["an empty reason", POD, { type: "Normal", reason: "" }, TypeError],
  ["a reason that is not a string", POD, { type: "Normal", reason: 5 }, TypeError],
  ["a reason over 128 characters", POD, { type: "Normal", reason: long }, RangeError],
  ["an action over 128 characters", POD, { ...OK, action: long }, RangeError],
  ["a message that is not a string", POD, { ...OK, message: {} }, TypeError],
  ["both message and note, different", POD, { ...OK, note: "other" }, TypeError],
  [
    "a related object without kind",
    POD,
    { ...OK, related: { apiVersion: "v1", name: "a" } },
    TypeError,
  ],
];
for (const [name, object, details, error] of invalid) {
  test(`contentOf: ${name} is a ${error.name}`, () => {
    assert.throws(() => contentOf(object, details as EventDetails), error);
  });
}

test("truncateNote: at most 1024 UTF-8 bytes, cut at a character boundary, ending with ' ...'", () => {
  assert.equal(truncateNote("a".repeat(1024)), "a".repeat(1024));
  const cut = truncateNote("a".repeat(2000));
  assert.equal(cut, "a".repeat(1020) + " ...");
  const wide = truncateNote("é".repeat(600)); // 1200 bytes
  const bytes = new TextEncoder().encode(wide).length;
  assert.ok(bytes <= 1024, `${bytes} bytes`);
  assert.ok(wide.endsWith("é ..."));
  assert.ok(!wide.includes("\uFFFD"));
});

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const names: [string, string][] = [
  ["web", "web.0123456789abcdef"],
  ["my.app", "my.app.0123456789abcdef"],
  ["system:controller:job", "system-controller-job.0123456789abcdef"],
  ["Upper_Case", "upper-case.0123456789abcdef"],
  ["..", "event.0123456789abcdef"],
  ["a." + "b".repeat(300), "a." + "b".repeat(234) + ".0123456789abcdef"],
];
for (const [object, want] of names) {
  test(`eventName: ${JSON.stringify(object.slice(0, 30))} gives a valid name`, () => {
    const name = eventName(object, "0123456789abcdef");
    assert.equal(name, want);
    assert.ok(name.length <= 253 && NAME.test(name), name);
  });
}

test("eventsV1Body and coreV1Body: a series of 1 has no series; times are micro-time and RFC 3339", () => {
  const c = contentOf(POD, OK);
  const reporter = { component: "ctl", instance: "host_1" };
  const t0 = Date.parse("2026-12-06T00:00:00.123Z");
  const s = { name: "web.1", namespace: "prod", count: 1, firstTime: t0, lastTime: t0 };
  const v1 = eventsV1Body(c, s, reporter);
  assert.equal(v1.eventTime, "2026-12-06T00:00:00.123000Z");
  assert.equal(v1.series, undefined);
  assert.equal(v1.reportingController, "ctl");
  assert.equal(v1.reportingInstance, "host_1");
  const v1s = eventsV1Body(c, { ...s, count: 2, lastTime: t0 + 1000 }, reporter);
  assert.deepEqual(v1s.series, { count: 2, lastObservedTime: "2026-12-06T00:00:01.123000Z" });
  const core = coreV1Body(c, { ...s, count: 3, lastTime: t0 + 2000 }, reporter);
  assert.equal(core.firstTimestamp, "2026-12-06T00:00:00Z");
  assert.equal(core.lastTimestamp, "2026-12-06T00:00:02Z");
  assert.equal(core.count, 3);
  assert.deepEqual(core.source, { component: "ctl", host: "host_1" });
  assert.deepEqual(core.involvedObject, c.regarding);
});
