import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { WatchEvent } from "../../src/api/types.ts";
import { watcher } from "../../src/reflector/watcher.ts";
import { ManualClock } from "../../testkit.ts";
import { cm, ev, ScriptedListerWatcher, untilAborted } from "./_scripted_lister_watcher.ts";

test("watcher() stopped by its signal while the consumer holds an event closes the watch source at once, even if the consumer never asks for more", async () => {
  const clock = new ManualClock();
  const lw = new ScriptedListerWatcher(clock);
  lw.objects = [cm("a", "5")];
  let closed = 0;
  lw.onWatch = (o) =>
    (async function* (): AsyncGenerator<WatchEvent> {
      try {
        o.onConnected?.();
        yield ev("ADDED", cm("b", "11"));
        await untilAborted(o.signal);
      } finally {
        closed++;
      }
    })();
  const ac = new AbortController();
  const it = watcher(lw, { signal: ac.signal, clock, useStreamingList: false, random: () => 0 });
  assert.equal((await it.next()).value?.type, "LIST");
  const held = await it.next(); // the consumer holds this event and never comes back
  assert.equal(held.value?.type, "ADDED");
  assert.equal(closed, 0);
  ac.abort();
  await clock.flush();
  assert.equal(closed, 1, "the watch's finally ran without another next()");
  // A consumer that does come back finds the loop ended quietly.
  assert.equal((await it.next()).done, true);
  assert.equal(closed, 1, "closed once");
});
