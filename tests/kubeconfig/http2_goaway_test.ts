/**
 * A graceful GOAWAY (NO_ERROR, the last stream id taken), as kube-apiserver
 * sends on the requests its `--goaway-chance` filter picks, while informers
 * watch over h2 through a TLS kubeconfig: every informer goes on and sees
 * later changes, and nothing is thrown uncaught or left rejected. On Node
 * undici closes the connection on any GOAWAY (each watch ends and watches
 * again, on a new connection); on Deno the client keeps its open streams
 * (RFC 9113 §6.8) and opens a new connection for new requests. Both run.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { runtime, test } from "../_test.ts";
import { unhandledRejections } from "../_unhandled_rejections.ts";
import { cm, h2Fixture, until } from "./_h2_fixture.ts";

/** Runs `fn` recording uncaught exceptions (Node's process event) and unhandled rejections (both runtimes). */
async function trapped(fn: () => Promise<void>): Promise<unknown[]> {
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => void uncaught.push(err);
  if (runtime === "node") process.on("uncaughtException", onUncaught);
  try {
    const { rejections } = await unhandledRejections(fn);
    return [...uncaught, ...rejections];
  } finally {
    if (runtime === "node") process.off("uncaughtException", onUncaught);
  }
}

const names = (n: number) => Array.from({ length: n }, (_, i) => `ns${i}`);

test("after a graceful GOAWAY on their h2 connection, 5 informers all watch on and see a later change", async () => {
  const seen = await trapped(async () => {
    const f = await h2Fixture();
    try {
      const namespaces = names(5);
      const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
      await until(() => f.server.openWatches === 5, "5 watches");
      assert.equal(f.server.connections.filter((c) => c.open && c.protocol === "h2").length, 1);
      const watchesBefore = f.server.watchesOpened;
      // A GET answered, then the GOAWAY covering every stream taken (what Go's server sends).
      await f.conn.client.requestJson("/api/v1/namespaces/ns0/configmaps");
      assert.equal(f.server.goAwayConnections(), 1);
      if (runtime === "node") {
        // undici closes the connection: every watch ends and watches again.
        await until(
          () => f.server.watchesOpened >= watchesBefore + 5 && f.server.openWatches === 5,
          "every informer to watch again",
        );
      }
      for (const ns of namespaces) f.server.create(cm(ns, "after"));
      await until(
        () => informers.every((inf, i) => inf.lister().get(namespaces[i], "after") !== undefined),
        "every informer to see a change made after the GOAWAY",
      );
      // Deno's client let the watches the GOAWAY covered stream on: none ended.
      if (runtime === "deno") assert.equal(f.server.watchesOpened, watchesBefore);
      // New requests go to a new connection (the old one takes no new stream).
      const list = await f.conn.client.requestJson<{ items: unknown[] }>(
        "/api/v1/namespaces/ns0/configmaps",
      );
      assert.equal(list.items.length, 1);
      assert.ok(f.server.connections.length >= 2, JSON.stringify(f.server.connections));
    } finally {
      await f.close();
    }
  });
  assert.deepEqual(seen, []);
});

test("GOAWAY during a list, then GOAWAY with an abort and a close at once: the informers sync, nothing is thrown uncaught", async () => {
  const seen = await trapped(async () => {
    const f = await h2Fixture();
    try {
      const informers = await Promise.all(names(3).map((ns) => f.informer(ns)));
      await until(() => f.server.openWatches === 3, "3 watches");
      // The next list is in flight when the GOAWAY comes. On Node it stalls after half its body
      // (undici then ends it and the informer lists again); on Deno, whose client lets a stream
      // the GOAWAY covers finish, a stalled list would stall on (to the list's deadline), so it
      // comes in small chunks, a turn of the event loop each, and completes.
      for (let i = 0; i < 20; i++) f.server.create(cm("late", `cm${i}`));
      f.server.inject({
        verb: "list",
        namespace: "late",
        fault: runtime === "node" ? { kind: "stall" } : { kind: "chunked", chunkSize: 16 },
      });
      const since = f.server.requestCount;
      const late = f.informer("late");
      await f.server.waitForRequests((r) => r.verb === "list" && r.namespace === "late", { since });
      f.server.goAwayConnections();
      const synced = await late;
      f.server.create(cm("late", "after"));
      f.server.create(cm("ns0", "after"));
      await until(
        () =>
          synced.lister().get("late", "after") !== undefined &&
          informers[0].lister().get("ns0", "after") !== undefined,
        "the late informer and an old one to see a change",
      );
      await until(() => f.server.openWatches === 4, "4 watches");
    } finally {
      // A GOAWAY, then in the same turn the informers aborted and the connection closed.
      f.server.goAwayConnections();
      await f.close();
    }
  });
  assert.deepEqual(seen, []);
});
