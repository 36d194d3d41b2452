/**
 * A connection black-holed by a proxy after periodic bookmarks were seen:
 * found by the learnt idle deadline.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { join } from "node:path";
import { serverFeatures, WatchIdleTimeoutError } from "../../mod.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { churnConfigMaps } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-blackhole";

/** A TCP proxy that forwards until `blackhole()`, then keeps every connection open and silent. */
async function blackholeProxy(target: URL) {
  let silent = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    upstream.connect(Number(target.port), target.hostname);
    client.on("data", (d) => !silent && upstream.write(d));
    upstream.on("data", (d) => !silent && client.write(d));
    for (const s of [client, upstream]) {
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        if (!silent) (s === client ? upstream : client).destroy();
      });
    }
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  const port = (server.address() as { port: number }).port;
  return {
    url: `https://127.0.0.1:${port}`,
    blackhole: () => (silent = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((res) => server.close(res));
    },
  };
}

e2eTest(
  "a connection black-holed after periodic bookmarks were seen is found by the learnt idle deadline (about 90 s), and no healthy watch is cut",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, connect, reflect, defer }) => {
      await namespaces(ns);
      await churnConfigMaps(admin, ns, { ops: 10, seed: 62 });
      const proxy = await blackholeProxy(new URL(cluster.server));
      defer(() => proxy.close());
      // the same kubeconfig (token file, CA), with the proxy as the server
      const path = join(cluster.dir, "token-via-proxy.yaml");
      const text = await readFile(cluster.kubeconfigs.token, "utf8");
      await writeFile(path, text.replaceAll(cluster.server, proxy.url));
      const viaProxy = await connect({ path });
      const c = viaProxy.client;
      const target = { apiVersion: "v1", resource: "configmaps", kind: "ConfigMap", namespace: ns };
      const r = reflect(c, target, {});
      await r.reflector.synced;
      // two periodic bookmarks (a fresh watch's first may be skipped on a quiet resource)
      await eventually(
        () => serverFeatures(c.server).bookmarkIntervalMs !== undefined,
        "periodic bookmarks learnt",
        260_000,
      );
      assert.deepEqual(
        r.errors.filter((e) => e.error instanceof WatchIdleTimeoutError),
        [],
        "no healthy watch was cut",
      );
      const watchesBefore = r.errors.length;
      const learnt = serverFeatures(c.server).bookmarkIntervalMs!;
      assert.ok(learnt <= 65_000, `bookmarks every ${learnt} ms: about a minute`);
      // The watch cut has just had a bookmark: 1.5 × the interval, at least
      // 90 s (two intervals + 30 s had it been renewed since, and not yet
      // had one), plus the 15 s re-check.
      const bound = Math.max(90_000, 2 * learnt + 30_000) + 15_000;
      proxy.blackhole();
      const cutAt = Date.now();
      await eventually(
        () => r.errors.slice(watchesBefore).some((e) => e.error instanceof WatchIdleTimeoutError),
        "the dead connection found",
        bound + 30_000,
      );
      const ms = Date.now() - cutAt;
      console.log(
        `e2e: a black-holed watch found after ${ms} ms (bookmarks every ${
          Math.round(learnt)
        } ms)`,
      );
      assert.ok(ms <= bound + 5_000, `found after ${ms} ms, bound ${bound}`);
    }),
  {
    only: "current",
    // the deadline logic is tested on both runtimes on fake time (tests/reflector/)
    denoOnly: "it waits out real bookmarks and a real idle deadline (about 4.5 min)",
  },
);
