/**
 * The API server of `relist_memory_bench.ts`, run in a worker thread so
 * that its own heap (the list it serializes) is not counted as the
 * client's. Driven by messages from the benchmark (see below).
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import { FakeApiServer } from "../testkit.ts";

const server = await FakeApiServer.start({ paginateResourceVersionZero: true });
const filler = "x".repeat(200);
for (let i = 0; i < workerData.count; i++) {
  server.create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `cm-${i}`,
      namespace: `ns-${i % 50}`,
      labels: { app: "bench", shard: String(i % 7) },
    },
    data: { payload: filler, index: String(i) },
  });
}
// "relist": a 410 on the running watch forces one; "close": stop serving.
// Each message is answered with the server's URL once done.
parentPort!.on("message", async (msg: string) => {
  if (msg === "relist") {
    server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
    server.endWatches();
  }
  if (msg === "close") await server.close();
  parentPort!.postMessage(server.url);
});
parentPort!.postMessage(server.url);
