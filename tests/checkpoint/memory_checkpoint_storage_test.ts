import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { enc, readAll } from "./_helpers.ts";
import { storageContract } from "./_storage_contract.ts";

storageContract(
  "memoryCheckpointStorage",
  () => Promise.resolve({ storage: memoryCheckpointStorage(), close: () => Promise.resolve() }),
);

test("memoryCheckpointStorage copies values in and out", async () => {
  const storage = memoryCheckpointStorage();
  const chunk = enc.encode("abc");
  await storage.put(
    "k",
    (async function* () {
      yield chunk;
    })(),
  );
  chunk[0] = 0x7a; // the producer reuses its buffer
  const first = await readAll((await storage.get("k"))!);
  first[1] = 0x7a; // a reader scribbles on what it got
  assert.equal(new TextDecoder().decode(await readAll((await storage.get("k"))!)), "abc");
});
