import assert from "node:assert/strict";
import { createTlsFetch, loadKubeConfig } from "../../kubeconfig.ts";
import { resourceListerWatcher, watcher } from "../../mod.ts";
import { runtime, test } from "../_test.ts";
import { cm, h2Fixture, until } from "./_h2_fixture.ts";

const names = (n: number, prefix = "ns") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test("20 informers over a TLS kubeconfig share one h2 connection, all sync and all see changes", async () => {
  const f = await h2Fixture();
  try {
    const namespaces = names(20);
    for (const ns of namespaces) f.server.create(cm(ns, "before"));
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    for (const [i, inf] of informers.entries()) {
      assert.ok(inf.lister().get(namespaces[i], "before"));
    }
    await until(() => f.server.openWatches === 20, "20 watches");
    for (const ns of namespaces) f.server.create(cm(ns, "after"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "after") !== undefined),
      "every informer to see its change",
    );
    const open = f.server.connections.filter((c) => c.open);
    assert.equal(open.length, 1, JSON.stringify(f.server.connections));
    assert.equal(open[0].protocol, "h2");
    assert.equal(open[0].streams, 20); // the 20 watches, on one connection
    // Node: one connection ever. Deno's client races a connection per request of the first burst
    // and closes the spare ones unused: one connection carries every request.
    const used = f.server.connections.filter((c) => c.requests > 0);
    assert.equal(used.length, 1, JSON.stringify(f.server.connections));
    if (runtime === "node") assert.equal(f.server.connections.length, 1);
  } finally {
    await f.close();
  }
});

test("a watch whose consumer stops reading does not stall the other watches on its h2 connection (flow control)", async () => {
  const f = await h2Fixture();
  const ac = new AbortController();
  try {
    const namespaces = names(10);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    // A bare watcher on "stalled": read up to its first watch event, then stop reading.
    const lw = resourceListerWatcher(f.conn.client, {
      apiVersion: "v1",
      resource: "configmaps",
      namespace: "stalled",
    });
    const it = watcher(lw, { signal: ac.signal, expectedKind: "ConfigMap" });
    assert.equal((await it.next()).value?.type, "LIST");
    const first = it.next(); // starts the watch
    await until(() => f.server.openWatches === 11, "11 watches");
    f.server.create(cm("stalled", "first"));
    assert.equal((await first).value?.type, "ADDED");
    // From here on nobody reads the stalled watch's body.
    // 64 objects of 64 KiB: 4 MiB for the stalled stream, 8x undici's connection window (512 KiB)
    // and 16x its stream window (256 KiB).
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < 64; i++) f.server.create(cm("stalled", `big${i}`, { big }));
    // Meanwhile every other watch gets each of its events.
    for (let round = 0; round < 5; round++) {
      for (const ns of namespaces) f.server.create(cm(ns, `r${round}`));
      await until(
        () =>
          informers.every((inf, i) => inf.lister().get(namespaces[i], `r${round}`) !== undefined),
        `round ${round}`,
      );
    }
    assert.equal(f.server.openConnections, 1);
    assert.equal(f.server.connections[0].protocol, "h2");
    // The stalled stream lost nothing: reading again, it gets all 64 objects.
    let seen = 0;
    while (seen < 64) {
      const { value } = await it.next();
      if (value?.type === "ADDED") seen++;
    }
    assert.equal(seen, 64);
  } finally {
    ac.abort();
    await f.close();
  }
});

test("a reset of the h2 connection ends every watch on it, and every informer recovers and sees a later change", async () => {
  const f = await h2Fixture();
  try {
    const namespaces = names(10);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    await until(() => f.server.openWatches === 10, "10 watches");
    const watchesBefore = f.server.watchesOpened;
    f.server.resetConnections();
    await until(() => f.server.connections[0].open === false, "the connection to close");
    for (const ns of namespaces) f.server.create(cm(ns, "later"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "later") !== undefined),
      "every informer to see the later change",
    );
    await until(() => f.server.openWatches === 10, "10 watches again");
    assert.ok(f.server.watchesOpened >= watchesBefore + 10); // each watched again
    const open = f.server.connections.filter((c) => c.open);
    assert.equal(open.length, 1); // again one shared connection
    assert.equal(open[0].protocol, "h2");
  } finally {
    await f.close();
  }
});

// Node learns the server's limit from its SETTINGS. Deno's client cannot, and would queue requests past
// it inside one connection: there maxStreamsPerConnection (4 here) spreads them over several clients.
test("a server advertising maxConcurrentStreams 4: 10 watches all stream, over 3 or more connections, none queued", async () => {
  const f = await h2Fixture({ maxConcurrentStreams: 4 }, { maxStreamsPerConnection: 4 });
  try {
    const namespaces = names(10);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    await until(() => f.server.openWatches === 10, "10 watches streaming at once");
    for (const ns of namespaces) f.server.create(cm(ns, "change"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "change") !== undefined),
      "every informer to see its change",
    );
    const open = f.server.connections.filter((c) => c.open);
    const carrying = open.filter((c) => c.streams > 0);
    assert.ok(carrying.length >= 3, JSON.stringify(f.server.connections));
    assert.ok(open.every((c) => c.protocol === "h2" && c.streams <= 4));
    assert.equal(open.reduce((n, c) => n + c.streams, 0), 10);
  } finally {
    await f.close();
  }
});

test("a TLS server offering only HTTP/1.1: informers work over HTTP/1.1, one connection per watch", async () => {
  const f = await h2Fixture({ http2: false });
  try {
    const namespaces = names(3);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    for (const ns of namespaces) f.server.create(cm(ns, "x"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "x") !== undefined),
      "every informer to see its change",
    );
    assert.ok(f.server.connections.every((c) => c.protocol === "http/1.1"));
    assert.ok(f.server.openConnections >= 3);
  } finally {
    await f.close();
  }
});

test("http2: false speaks HTTP/1.1 even to a server offering h2", async () => {
  const f = await h2Fixture({}, { http2: false });
  try {
    const namespaces = names(3);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    for (const ns of namespaces) f.server.create(cm(ns, "x"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "x") !== undefined),
      "every informer to see its change",
    );
    assert.ok(f.server.connections.length >= 3);
    assert.ok(f.server.connections.every((c) => c.protocol === "http/1.1"));
  } finally {
    await f.close();
  }
});

test("the http2 option must be a boolean", async () => {
  await assert.rejects(
    createTlsFetch({}, { http2: "yes" as unknown as boolean }),
    /createTlsFetch: http2 must be a boolean, got string/,
  );
  await assert.rejects(
    loadKubeConfig({ text: "{}", http2: 1 as unknown as boolean }),
    /loadKubeConfig: http2 must be a boolean, got number/,
  );
});
