import assert from "node:assert/strict";
import * as promClient from "prom-client";
import { test } from "../_test.ts";
import { type PromClientLike, prometheusMetrics } from "../../metrics.ts";
import { WorkQueue } from "../../src/workqueue/work_queue.ts";
import { ManualClock } from "../../src/testkit/manual_clock.ts";
import { seriesCount } from "./_series.ts";

const client: PromClientLike<promClient.Registry> = promClient;

function value(text: string, line: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test("prometheus adapter records a work queue's depth, adds, retries and durations, and removes them on shutdown", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  const clock = new ManualClock();
  const q = new WorkQueue({ name: "mirror", metrics, clock });
  q.add("a");
  q.add("a");
  q.add("b");
  await clock.advance(2_000);
  const key = await q.get();
  await clock.advance(500);
  q.done(key!);
  q.addRateLimited(key!);
  const n = '{name="mirror"}';
  const text = await registry.metrics();
  assert.equal(value(text, `kube_workqueue_depth${n}`), 1);
  assert.equal(value(text, `kube_workqueue_adds_total${n}`), 2);
  assert.equal(value(text, `kube_workqueue_retries_total${n}`), 1);
  assert.equal(value(text, `kube_workqueue_queue_duration_seconds_sum${n}`), 2);
  assert.equal(value(text, `kube_workqueue_work_duration_seconds_sum${n}`), 0.5);
  assert.equal(value(text, `kube_workqueue_work_duration_seconds_count${n}`), 1);
  assert.deepEqual(metrics.workqueueNames, ["mirror"]);
  q.shutdown();
  assert.equal(await seriesCount(registry), 0, "every series of the queue is gone");
  assert.deepEqual(metrics.workqueueNames, []);
  metrics.unregister();
});

test("prometheus adapter sums the depth of live queues of one name and keeps their series until the last shuts down", async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry, prefix: "x_" });
  const q1 = new WorkQueue({ name: "q", metrics });
  const q2 = new WorkQueue({ name: "q", metrics });
  q1.add("a");
  q2.add("a");
  q2.add("b");
  assert.equal(value(await registry.metrics(), 'x_workqueue_depth{name="q"}'), 3);
  q1.shutdown();
  assert.equal(value(await registry.metrics(), 'x_workqueue_adds_total{name="q"}'), 3);
  q2.shutdown();
  assert.equal(await seriesCount(registry), 0);
  metrics.unregister();
});

test("prometheus adapter registers no work queue metric until a queue asks", () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client, registry });
  metrics.reflector("r").dispose();
  assert.equal(registry.getSingleMetric("kube_workqueue_depth"), undefined);
  new WorkQueue({ name: "w", metrics }).shutdown();
  assert.ok(registry.getSingleMetric("kube_workqueue_depth"));
  metrics.unregister();
  assert.equal(
    registry.getSingleMetric("kube_workqueue_depth"),
    undefined,
    "unregister removes them",
  );
});
