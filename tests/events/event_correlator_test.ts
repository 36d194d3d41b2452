import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { EventCorrelator, type EventSeries } from "../../src/events/_event_correlator.ts";

const LIMITS = { windowMs: 600_000, burst: 25, refillMs: 300_000, cacheSize: 4096 };

/** One call: at `t` ms, of series `key` on object `obj`; `room`: the queue has room; `sent`: the recorder wrote what was pending first. */
interface Step {
  t: number;
  obj?: string;
  key?: string;
  room?: boolean;
  sent?: boolean;
  want: string; // "create name count" | "update name count enqueue" | "drop reason"
}

function run(steps: Step[], limits = LIMITS): string[] {
  const c = new EventCorrelator(limits);
  let names = 0;
  const pending: EventSeries[] = [];
  return steps.map((s) => {
    if (s.sent ?? true) {
      for (const p of pending.splice(0)) {
        p.pending = false;
        p.created = true;
      }
    }
    const obj = s.obj ?? "a";
    const d = c.decide({
      spamKey: obj,
      key: `${obj}/${s.key ?? "x"}`,
      namespace: "ns",
      content: null,
      newName: () => `n${++names}`,
      queueHasRoom: s.room ?? true,
    }, s.t);
    if (d.kind === "drop") return `drop ${d.reason}`;
    if (d.kind === "create" || d.enqueue) {
      d.series.pending = true;
      pending.push(d.series);
    }
    return d.kind === "create"
      ? `create ${d.series.name} ${d.series.count}`
      : `update ${d.series.name} ${d.series.count} ${d.enqueue}`;
  });
}

const cases: { name: string; steps: Step[]; limits?: typeof LIMITS }[] = [
  {
    name: "three identical events within the window make one series of 3",
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 1_000, want: "update n1 2 true" },
      { t: 2_000, want: "update n1 3 true" },
    ],
  },
  {
    name: "repeats while the write still waits join it (no second write queued)",
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 1, sent: false, want: "update n1 2 false" },
      { t: 2, sent: false, want: "update n1 3 false" },
      { t: 3, want: "update n1 4 true" },
    ],
  },
  {
    name: "a different message (key) starts another series",
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 1, key: "y", want: "create n2 1" },
      { t: 2, want: "update n1 2 true" },
    ],
  },
  {
    name:
      "the window counts from the last observation: at the edge it joins, past it a new series starts",
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 600_000, want: "update n1 2 true" },
      { t: 1_200_001, want: "create n2 1" },
      { t: 1_200_002, want: "update n2 2 true" },
    ],
  },
  {
    name: "a clock that went back starts a new series",
    steps: [
      { t: 10_000, want: "create n1 1" },
      { t: 5_000, want: "create n2 1" },
    ],
  },
  {
    name: "the token bucket: a burst, then one per refill period, per object",
    limits: { ...LIMITS, burst: 2 },
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 1, want: "update n1 2 true" },
      { t: 2, want: "drop rateLimited" },
      { t: 3, obj: "b", want: "create n2 1" },
      { t: 299_999, want: "drop rateLimited" },
      { t: 300_001, want: "update n1 3 true" },
      { t: 300_002, want: "drop rateLimited" },
    ],
  },
  {
    name: "a dropped call uses no token and does not count in the series",
    limits: { ...LIMITS, burst: 1, refillMs: 1_000 },
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 500, want: "drop rateLimited" },
      { t: 1_000, want: "update n1 2 true" },
    ],
  },
  {
    name: "a full queue drops a call that would queue a write, but not one whose write waits",
    steps: [
      { t: 0, want: "create n1 1" },
      { t: 1, sent: false, room: false, want: "update n1 2 false" },
      { t: 2, key: "y", sent: false, room: false, want: "drop queueFull" },
      { t: 3, room: false, want: "drop queueFull" },
      { t: 4, want: "update n1 3 true" },
    ],
  },
  {
    name:
      "the caches are bounded: a forgotten series starts again, a forgotten bucket is full again",
    limits: { ...LIMITS, burst: 1, cacheSize: 2 },
    steps: [
      { t: 0, obj: "a", want: "create n1 1" },
      { t: 1, obj: "a", want: "drop rateLimited" },
      { t: 2, obj: "b", want: "create n2 1" },
      { t: 3, obj: "c", want: "create n3 1" },
      { t: 4, obj: "a", want: "create n4 1" },
    ],
  },
];

for (const c of cases) {
  test(`EventCorrelator: ${c.name}`, () => {
    assert.deepEqual(run(c.steps, c.limits), c.steps.map((s) => s.want));
  });
}

test("EventCorrelator: at most cacheSize keys are held", () => {
  const c = new EventCorrelator({ ...LIMITS, cacheSize: 4096 });
  for (let i = 0; i < 10_000; i++) {
    c.decide({
      spamKey: `o${i}`,
      key: `o${i}/x`,
      namespace: "ns",
      content: null,
      newName: () => `n${i}`,
      queueHasRoom: true,
    }, i);
  }
  assert.deepEqual(c.sizes, { buckets: 4096, series: 4096 });
});
