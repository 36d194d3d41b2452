// Regression (found in review): an Informer with a `transform` (e.g. one that strips secret data) writes
// the transformed objects in the snapshot, but the RAW event objects into log pieces
// (Reflector#apply records ev.object, not what the store kept).
import { test } from "../_test.ts";
import assert from "node:assert/strict";
import { cm, ev, ScriptedListerWatcher, untilAborted } from "./_scripted_lister_watcher.ts";
import type { KubeObject, WatchEvent } from "../../src/api/types.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { Informer } from "../../src/informer/informer.ts";
import type { WatchOptions } from "../../src/transport/lister_watcher.ts";
import { ManualClock } from "../../testkit.ts";

const identity = { server: "https://k8s.test", apiVersion: "v1", resource: "configmaps" };

test("an informer's transform applies to the log pieces too (no raw data written)", async () => {
  const storage = memoryCheckpointStorage();
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = Array.from({ length: 20 }, (_, i) => cm(`cm-${i}`, "5", { secret: "s3cr3t" }));
  lw.resourceVersion = "10";
  const queue: WatchEvent[] = [];
  let wake: (() => void) | undefined;
  lw.onWatch = (o: WatchOptions) =>
    (async function* () {
      o.onConnected?.();
      const aborted = untilAborted(o.signal);
      while (!o.signal?.aborted) {
        while (queue.length) yield queue.shift()!;
        await Promise.race([new Promise<void>((r) => (wake = r)), aborted]);
      }
    })();
  const informer = new Informer<KubeObject>(lw, {
    clock,
    random: () => 0,
    useStreamingList: false,
    onError: () => {},
    // strip the data: never kept, never stored
    transform: (o) => ({ ...o, data: undefined } as KubeObject),
    checkpoint: { storage, key: "k", identity, saveOnStop: false },
  });
  const ac = new AbortController();
  const done = informer.run({ signal: ac.signal });
  await clock.flush();
  await informer.waitForSync();
  assert.equal((await informer.saveCheckpoint()).written, "base");
  queue.push(ev("MODIFIED", cm("cm-1", "13", { secret: "NEW-s3cr3t" })));
  wake?.();
  while (informer.lastSyncResourceVersion !== "13") await clock.advance(1);
  const saved = await informer.saveCheckpoint();
  assert.equal(saved.written, "log");
  // read the log piece via the head
  const head = new TextDecoder().decode(await read(storage, "k"));
  const gen = /"log":\[\{"gen":"([0-9a-f]{16})"/.exec(head)![1];
  const log = new TextDecoder().decode(await read(storage, `k/log/${gen}`));
  ac.abort();
  await clock.flush();
  await done;
  assert.ok(!log.includes("s3cr3t"), `log piece holds what the transform removed:\n${log}`);
});

async function read(
  storage: { get: (k: string) => Promise<AsyncIterable<Uint8Array> | undefined> },
  key: string,
) {
  const body = await storage.get(key);
  const chunks: Uint8Array[] = [];
  for await (const c of body!) chunks.push(c);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
