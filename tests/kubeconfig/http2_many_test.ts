import assert from "node:assert/strict";
import { runtime, test } from "../_test.ts";
import { cm, h2Fixture } from "./_h2_fixture.ts";

// Many informers, each a list then a watch, against a server whose stream cap
// they overflow several times: every one syncs and watches (none left queued
// at the gate or inside a full connection), over about informers / cap
// connections. Node reads the cap from the server's SETTINGS; Deno's client
// cannot, so it is given as maxStreamsPerConnection there.
test("HTTP/2: 60 informers over a server capping 10 streams per connection all sync and watch", async () => {
  const fx = await h2Fixture(
    { maxConcurrentStreams: 10 },
    runtime === "deno" ? { maxStreamsPerConnection: 10 } : {},
  );
  try {
    const n = 60;
    for (let i = 0; i < n; i++) fx.server.create(cm(`ns${i}`, "a"));
    const informers = await Promise.all(
      Array.from({ length: n }, (_, i) => fx.informer(`ns${i}`)),
    );
    const open = fx.server.connections.filter((c) => c.open);
    assert.ok(open.every((c) => c.streams <= 10), JSON.stringify(open));
    for (let i = 0; i < n; i++) fx.server.create(cm(`ns${i}`, "b"));
    for (let i = 0; i < n; i++) {
      // A failure bound, not a timing assert: each change comes in milliseconds.
      for (let tries = 0; !informers[i].indexer.getByKey(`ns${i}/b`); tries++) {
        assert.ok(tries < 6000, `informer ns${i} did not see its change`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  } finally {
    await fx.close();
  }
});
