import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { noopMetrics } from "../../src/metrics/reflector_metrics.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { MetricsProvider } from "../../src/metrics/reflector_metrics.ts";
import { FakeListerWatcher, FAST, obj, until } from "../informer/_fake_lister_watcher.ts";

test("noopMetrics hands out handles that do nothing", () => {
  const m = noopMetrics.reflector("x", { storeSize: () => 1 });
  assert.equal(m.listDone, undefined);
  m.dispose();
  m.dispose();
});

test("an informer reports to its metrics provider and disposes the handle when it stops", async () => {
  const calls: string[] = [];
  let sources: { storeSize?: () => number; handlerQueueDepth?: () => number } = {};
  const provider: MetricsProvider = {
    reflector(name, s = {}) {
      sources = s;
      calls.push(`open ${name}`);
      return {
        relist: (reason) => void calls.push(`relist ${reason}`),
        listDone: ({ items }) => void calls.push(`list ${items}`),
        watchStart: () => void calls.push("watch"),
        handlerDone: ({ failed }) => void calls.push(`handler ${failed}`),
        event: () => {
          throw new Error("a broken metrics backend must not break the informer");
        },
        dispose: () => void calls.push("dispose"),
      };
    },
  };
  const lw = new FakeListerWatcher([obj("a"), obj("b")]);
  const informer = new Informer(lw, { ...FAST, name: "cms", metrics: provider, onError: () => {} });
  informer.addEventHandler({ onAdd: () => {}, onUpdate: () => Promise.reject(new Error("x")) });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  await informer.waitForSync();
  await until(() => lw.liveWatches === 1, "a watch");
  lw.apply({ ...obj("a"), data: { v: "1" } });
  await until(() => calls.includes("handler true"), "the failed handler call");
  assert.equal(sources.storeSize?.(), 2);
  assert.equal(sources.handlerQueueDepth?.(), 0);
  ac.abort();
  await done;
  assert.deepEqual(calls.filter((c) => !c.startsWith("handler")), [
    "open cms",
    "relist initial",
    "list 2",
    "watch",
    "dispose",
  ]);
  assert.deepEqual(calls.filter((c) => c.startsWith("handler")), [
    "handler false",
    "handler false",
    "handler true",
  ]);
});
