import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { IDENTITY } from "./_helpers.ts";
import { MapStorage, storedHead } from "./_map_storage.ts";
import { Model, saveModel } from "./_model.ts";

test("a log piece longer than its head says is corrupt, and no more of it is read than the head says", async () => {
  const storage = new MapStorage();
  const model = new Model(100);
  await saveModel(storage, model, undefined, "");
  const since = model.resourceVersion;
  await saveModel(storage, model, model.step(2), since);
  const head = storedHead(storage.values, "k");
  const piece = `k/log/${head.log[0].gen}`;
  const value = storage.values.get(piece)!;
  // the piece, then a megabyte more (a wrong or hostile store)
  const bigger = new Uint8Array(value.byteLength + 1024 * 1024);
  bigger.set(value);
  storage.values.set(piece, bigger);
  storage.chunkSize = 1024;
  let served = 0;
  const counting: CheckpointStorage = {
    get: async (key, o) => {
      const body = await storage.get(key, o);
      if (key !== piece || body === undefined) return body;
      return (async function* () {
        for await (const chunk of body) {
          served += chunk.byteLength;
          yield chunk;
        }
      })();
    },
    put: (k, d, o) => storage.put(k, d, o),
    delete: (k, o) => storage.delete(k, o),
  };
  await assert.rejects(
    loadCheckpoint(counting, "k", IDENTITY),
    (err) => err instanceof CheckpointError && err.reason === "corrupt",
  );
  assert.ok(
    served <= value.byteLength + 1024,
    `${served} bytes read of a ${value.byteLength}-byte piece`,
  );
});
