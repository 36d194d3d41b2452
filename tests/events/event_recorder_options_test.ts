import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import {
  EVENT_RECORDER_DEFAULTS,
  type EventRecorderOptions,
  resolveEventRecorderOptions,
} from "../../src/events/event_recorder_options.ts";
import { EventRecorder } from "../../src/events/event_recorder.ts";

const client = new KubeClient({ server: "http://127.0.0.1:1" });
const base: EventRecorderOptions = { client, component: "my-controller" };

test("EventRecorder options: the defaults are client-go's and one frozen object", () => {
  assert.ok(Object.isFrozen(EVENT_RECORDER_DEFAULTS));
  const o = resolveEventRecorderOptions(base);
  assert.equal(o.maxPending, 1000);
  assert.equal(o.windowMs, 600_000);
  assert.equal(o.burst, 25);
  assert.equal(o.refillMs, 300_000);
  assert.equal(o.cacheSize, 4096);
  assert.match(o.instance, /^(.+_)?[0-9a-f]{8}$/);
  assert.ok(o.instance.length <= 128);
});

test("EventRecorder options: the default instance is the hostname and random hex, never anything else", () => {
  const o = resolveEventRecorderOptions({ ...base, random: () => 0.5 });
  assert.match(o.instance, /(^|_)88888888$/);
});

const invalid: [
  string,
  Partial<Record<keyof EventRecorderOptions, unknown>>,
  typeof TypeError | typeof RangeError,
][] = [
  ["no client", { client: undefined }, TypeError],
  ["a client that is not a KubeClient", { client: {} }, TypeError],
  ["no component", { component: undefined }, TypeError],
  ["an empty component", { component: "" }, TypeError],
  ["a component with spaces", { component: "my controller" }, TypeError],
  ["a component name over 63 characters", { component: "a".repeat(64) }, TypeError],
  ["an empty instance", { instance: "" }, TypeError],
  ["an instance over 128 characters", { instance: "i".repeat(129) }, TypeError],
  ["maxPending 0", { maxPending: 0 }, RangeError],
  ["maxPending 1.5", { maxPending: 1.5 }, RangeError],
  ["maxPending as a string", { maxPending: "10" }, TypeError],
  ["a negative window", { windowMs: -1 }, RangeError],
  ["burst 0", { burst: 0 }, RangeError],
  ["refillMs 0", { refillMs: 0 }, RangeError],
  ["refillMs Infinity", { refillMs: Infinity }, RangeError],
  ["cacheSize 0", { cacheSize: 0 }, RangeError],
  ["requestTimeoutMs NaN", { requestTimeoutMs: NaN }, RangeError],
  ["a negative retryDelayMs", { retryDelayMs: -5 }, RangeError],
  ["onError that is not a function", { onError: "log" }, TypeError],
  ["random that is not a function", { random: 4 }, TypeError],
  ["a clock without now()", { clock: {} }, TypeError],
];
for (const [name, patch, error] of invalid) {
  test(`EventRecorder options: ${name} is a ${error.name} naming the option`, () => {
    const options = { ...base, ...patch } as EventRecorderOptions;
    const err = (() => {
      try {
        new EventRecorder(options);
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof error, `${err}`);
    const field = Object.keys(patch)[0];
    assert.ok((err as Error).message.includes(field), (err as Error).message);
  });
}

test("EventRecorder options: qualified components and the edges of ranges are accepted", () => {
  for (
    const patch of [
      { component: "example.com/my-controller" },
      { component: "Ctl_1" },
      { windowMs: 0 },
      { maxPending: 1, burst: 1, cacheSize: 1, retryDelayMs: 0 },
      { instance: "i".repeat(128) },
    ]
  ) {
    assert.doesNotThrow(() => new EventRecorder({ ...base, ...patch }), JSON.stringify(patch));
  }
});
