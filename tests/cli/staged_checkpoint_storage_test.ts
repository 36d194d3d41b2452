import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { type CheckpointStorage, memoryCheckpointStorage } from "../../checkpoint.ts";
import { StagedCheckpointStorage } from "../../src/cli/_staged_checkpoint_storage.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const chunks = (...texts: string[]) =>
  (async function* () {
    for (const t of texts) yield bytes(t);
  })();

async function text(storage: CheckpointStorage, key: string): Promise<string | undefined> {
  const value = await storage.get(key);
  if (value === undefined) return undefined;
  let out = "";
  for await (const chunk of value) out += new TextDecoder().decode(chunk);
  return out;
}

/** A storage that logs its writes over a memory one. */
function logged(): { storage: CheckpointStorage; log: string[] } {
  const real = memoryCheckpointStorage();
  const log: string[] = [];
  return {
    log,
    storage: {
      get: (key, options) => real.get(key, options),
      put: async (key, data, options) => {
        await real.put(key, data, options);
        log.push(`put ${key}`);
      },
      delete: async (key, options) => {
        await real.delete(key, options);
        log.push(`delete ${key}`);
      },
    },
  };
}

test("staged storage: reads see the staged writes over the real storage, which is untouched until commit", async () => {
  const { storage: real, log } = logged();
  await real.put("kept", chunks("old"));
  await real.put("gone", chunks("x"));
  log.length = 0;
  const staged = new StagedCheckpointStorage(real);
  assert.equal(await text(staged, "kept"), "old");
  await staged.put("kept", chunks("ne", "w"));
  await staged.put("head", chunks("1"));
  await staged.put("head", chunks("2"));
  await staged.delete("gone");
  assert.equal(await text(staged, "kept"), "new");
  assert.equal(await text(staged, "head"), "2");
  assert.equal(await text(staged, "gone"), undefined);
  assert.equal(await text(staged, "other"), undefined);
  assert.equal(staged.pending, 4);
  assert.deepEqual(log, [], "nothing written yet");
  assert.equal(await text(real, "kept"), "old");

  await staged.commit();
  assert.deepEqual(log, ["put kept", "put head", "put head", "delete gone"], "replayed in order");
  assert.equal(staged.pending, 0);
  assert.equal(await text(real, "kept"), "new");
  assert.equal(await text(real, "head"), "2");
  assert.equal(await text(real, "gone"), undefined);
  await staged.commit(); // nothing left: nothing written
  assert.equal(log.length, 4);
});

test("staged storage: a put whose data throws stages nothing; a failed commit keeps what is left; an abort rejects", async () => {
  const real = memoryCheckpointStorage();
  const staged = new StagedCheckpointStorage(real);
  await assert.rejects(
    staged.put(
      "k",
      (async function* () {
        yield bytes("half");
        throw new Error("torn");
      })(),
    ),
    /torn/,
  );
  assert.equal(staged.pending, 0);
  assert.equal(await text(staged, "k"), undefined);

  await staged.put("a", chunks("1"));
  await staged.put("b", chunks("2"));
  let fail = true;
  const flaky = new StagedCheckpointStorage({
    get: (key) => real.get(key),
    put: (key, data) => {
      if (key === "b" && fail) return Promise.reject(new Error("disk full"));
      return real.put(key, data);
    },
    delete: (key) => real.delete(key),
  });
  await flaky.put("a", chunks("1"));
  await flaky.put("b", chunks("2"));
  await assert.rejects(flaky.commit(), /disk full/);
  assert.equal(flaky.pending, 1, "the put that failed and what follows stay staged");
  assert.equal(await text(real, "a"), "1");
  assert.equal(await text(real, "b"), undefined);
  fail = false;
  await flaky.commit();
  assert.equal(await text(real, "b"), "2");

  const reason = new Error("stop");
  const signal = AbortSignal.abort(reason);
  await assert.rejects(staged.get("a", { signal }), (err) => err === reason);
  await assert.rejects(staged.put("c", chunks("3"), { signal }), (err) => err === reason);
  await assert.rejects(staged.delete("a", { signal }), (err) => err === reason);
  await assert.rejects(staged.commit({ signal }), (err) => err === reason);
  assert.equal(staged.pending, 2);
});
