import assert from "node:assert/strict";
import { createTlsFetch, inClusterConfig, loadKubeConfig } from "../../kubeconfig.ts";
import { connectKubeConfig } from "../../kubeconfig_edge.ts";
import { resolveMaxStreams } from "../../src/kubeconfig/_http2_option.ts";
import { test } from "../_test.ts";
import { cm, h2Fixture, until } from "./_h2_fixture.ts";

test("resolveMaxStreams: a whole number >= 1; TypeError for a non-number, RangeError otherwise", () => {
  const table: [unknown, number | undefined | "TypeError" | "RangeError"][] = [
    [undefined, undefined], // each runtime's default
    [1, 1],
    [100, 100],
    [250, 250],
    [0, "RangeError"],
    [-1, "RangeError"],
    [1.5, "RangeError"],
    [Number.NaN, "RangeError"],
    [Infinity, "RangeError"],
    [2 ** 53, "RangeError"],
    ["4", "TypeError"],
    [null, "TypeError"],
    [true, "TypeError"],
  ];
  for (const [value, expected] of table) {
    if (expected === "TypeError" || expected === "RangeError") {
      assert.throws(() => resolveMaxStreams(value, "f"), (err: Error) => {
        assert.equal(err.name, expected, String(value));
        assert.match(err.message, /^f: maxStreamsPerConnection must be/);
        return true;
      });
    } else assert.equal(resolveMaxStreams(value, "f"), expected, String(value));
  }
});

test("every loader validates maxStreamsPerConnection before connecting, naming itself", async () => {
  await assert.rejects(
    createTlsFetch({}, { maxStreamsPerConnection: "8" as unknown as number }),
    {
      name: "TypeError",
      message: "createTlsFetch: maxStreamsPerConnection must be a number, got string",
    },
  );
  await assert.rejects(
    loadKubeConfig({ text: "{}", maxStreamsPerConnection: 0 }),
    {
      name: "RangeError",
      message: "loadKubeConfig: maxStreamsPerConnection must be a whole number >= 1, got 0",
    },
  );
  await assert.rejects(
    connectKubeConfig("{}", { maxStreamsPerConnection: 2.5 }),
    {
      name: "RangeError",
      message: /^connectKubeConfig: maxStreamsPerConnection must be a whole number/,
    },
  );
  await assert.rejects(
    inClusterConfig({ env: {}, maxStreamsPerConnection: -3 }),
    { name: "RangeError", message: /^inClusterConfig: maxStreamsPerConnection/ },
  );
});

test("maxStreamsPerConnection below the server's limit: 10 watches over connections of at most 4 streams", async () => {
  // The server allows 8 per connection; the client keeps to 4 (Node: undici's pipelining capped; Deno: the budget).
  const f = await h2Fixture({ maxConcurrentStreams: 8 }, { maxStreamsPerConnection: 4 });
  try {
    const namespaces = Array.from({ length: 10 }, (_, i) => `ns${i}`);
    const informers = await Promise.all(namespaces.map((ns) => f.informer(ns)));
    await until(() => f.server.openWatches === 10, "10 watches streaming at once");
    for (const ns of namespaces) f.server.create(cm(ns, "change"));
    await until(
      () => informers.every((inf, i) => inf.lister().get(namespaces[i], "change") !== undefined),
      "every informer to see its change",
    );
    const open = f.server.connections.filter((c) => c.open);
    assert.ok(open.filter((c) => c.streams > 0).length >= 3, JSON.stringify(f.server.connections));
    assert.ok(open.every((c) => c.protocol === "h2" && c.streams <= 4), JSON.stringify(open));
    assert.equal(open.reduce((n, c) => n + c.streams, 0), 10);
  } finally {
    await f.close();
  }
});
