import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { configMaps, dec, IDENTITY, never, turn } from "./_helpers.ts";
import { MapStorage, storedPieces } from "./_map_storage.ts";

/** A memory storage that records the chunk sizes each put receives, by key. */
function recordingStorage(): CheckpointStorage & { chunkSizes: Map<string, number[]> } {
  const inner = memoryCheckpointStorage();
  const chunkSizes = new Map<string, number[]>();
  return {
    chunkSizes,
    get: inner.get,
    delete: inner.delete,
    put(key, data, options) {
      const sizes: number[] = [];
      chunkSizes.set(key, sizes);
      return inner.put(
        key,
        (async function* () {
          for await (const chunk of data) {
            sizes.push(chunk.byteLength);
            yield chunk;
          }
        })(),
        options,
      );
    },
  };
}

test("saveCheckpoint writes a small head at the key, naming a snapshot in NDJSON: a header, one compact line per object, an end marker with a checksum", async () => {
  const storage = new MapStorage();
  const items = configMaps(3, 40);
  const saved = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "77",
    items,
  });
  assert.deepEqual(storage.puts.map((p) => p.key.replace(/[0-9a-f]{16}$/, "GEN")), [
    "k/base/GEN",
    "k",
  ], "the snapshot first, then the head");
  // the head: one line of JSON, an end marker with its checksum
  const headText = dec.decode(storage.values.get("k")!);
  assert.ok(headText.endsWith("\n"));
  const headLines = headText.slice(0, -1).split("\n");
  assert.equal(headLines.length, 2);
  const head = JSON.parse(headLines[0]);
  assert.equal(head.format, "kube-reflector-checkpoint");
  assert.equal(head.version, 2);
  assert.equal(head.resourceVersion, "77");
  assert.equal(head.count, 3);
  assert.deepEqual(head.identity, IDENTITY);
  assert.deepEqual(head.log, []);
  assert.equal(head.partial, undefined);
  const [base] = storedPieces(storage.values, "k").base;
  assert.equal(base, `k/base/${head.base.gen}`);
  assert.deepEqual(head.base, {
    gen: head.base.gen,
    resourceVersion: "77",
    count: 3,
    bytes: storage.values.get(base)!.byteLength,
  });
  const headEnd = JSON.parse(headLines[1]);
  assert.equal(headEnd.end, "kube-reflector-checkpoint");
  assert.match(headEnd.checksum, /^[0-9a-f]{32}$/);
  assert.equal(saved.bytes, storage.bytesWritten);
  assert.ok(headText.length < 1000, `a head of ${headText.length} bytes`);
  // the snapshot: a version 1 checkpoint
  const text = dec.decode(storage.values.get(base)!);
  assert.ok(text.endsWith("\n"));
  const lines = text.slice(0, -1).split("\n");
  assert.equal(lines.length, 5);
  const header = JSON.parse(lines[0]);
  assert.equal(header.format, "kube-reflector-checkpoint");
  assert.equal(header.version, 1);
  assert.equal(header.resourceVersion, "77");
  assert.equal(header.count, 3);
  assert.deepEqual(header.identity, IDENTITY);
  assert.deepEqual(lines.slice(1, 4), items.map((item) => JSON.stringify(item)));
  const trailer = JSON.parse(lines[4]);
  assert.equal(trailer.end, "kube-reflector-checkpoint");
  assert.equal(trailer.count, 3);
  assert.match(trailer.checksum, /^[0-9a-f]{32}$/);
});

test("saveCheckpoint streams chunks of about 64 KiB, never the whole text at once", async () => {
  const storage = recordingStorage();
  const items = configMaps(2000, 1000); // about 2.5 MB
  const { bytes, count } = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "1",
    items,
  });
  assert.equal(count, 2000);
  const all = [...storage.chunkSizes.values()].flat();
  assert.equal(all.reduce((a, b) => a + b, 0), bytes);
  const [base, sizes] = [...storage.chunkSizes].find(([key]) => key.startsWith("k/base/"))!;
  assert.ok(sizes.length > 20, `${sizes.length} chunks of ${base}`);
  assert.ok(Math.max(...all) < 200 * 1024, `largest chunk ${Math.max(...all)}`);
  assert.ok(sizes.slice(0, -1).every((n) => n >= 64 * 1024));
});

test("saveCheckpoint gives the event loop turns while saving many objects", async () => {
  const storage = memoryCheckpointStorage();
  const items = configMaps(8000, 1000); // about 10 MB
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  try {
    await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items });
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks >= 2, `timer ran ${ticks} times during the save`);
  let loadTicks = 0;
  const loadTimer = setInterval(() => loadTicks++, 0);
  try {
    assert.equal((await loadCheckpoint(storage, "k", IDENTITY))?.items.length, 8000);
  } finally {
    clearInterval(loadTimer);
  }
  assert.ok(loadTicks >= 2, `timer ran ${loadTicks} times during the load`);
});

test("saveCheckpoint takes any iterable of objects, as a snapshot", async () => {
  const storage = memoryCheckpointStorage();
  const map = new Map(configMaps(5).map((o) => [o.metadata.name!, o]));
  const pending = saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "5",
    items: map.values(),
  });
  map.clear(); // after the call: the save holds its own list
  await pending;
  assert.equal((await loadCheckpoint(storage, "k", IDENTITY))?.items.length, 5);
});

test("saveCheckpoint never saves credentials of the server URL", async () => {
  const storage = new MapStorage();
  const identity = {
    ...IDENTITY,
    server: "https://admin:s3cret@k8s.example.com:6443/?token=abc#x",
  };
  await saveCheckpoint(storage, "k", { identity, resourceVersion: "1", items: [] });
  assert.equal(storage.values.size, 2, "a head and a snapshot");
  for (const [key, value] of storage.values) {
    assert.doesNotMatch(dec.decode(value), /s3cret|admin|token=abc/, key);
  }
  assert.equal(
    (await loadCheckpoint(storage, "k", IDENTITY))?.identity.server,
    "https://k8s.example.com:6443",
  );
});

test("saveCheckpoint refuses invalid arguments with a TypeError and keeps the previous checkpoint", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "1",
    items: configMaps(2),
  });
  const bad: [string, () => Promise<unknown>][] = [
    [
      "empty key",
      () => saveCheckpoint(storage, "", { identity: IDENTITY, resourceVersion: "2", items: [] }),
    ],
    [
      "empty resourceVersion",
      () => saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "", items: [] }),
    ],
    ["identity without resource", () =>
      saveCheckpoint(storage, "k", {
        identity: { ...IDENTITY, resource: undefined as unknown as string },
        resourceVersion: "2",
        items: [],
      })],
    ["item without metadata", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [...configMaps(3), { kind: "Nope" } as never],
      })],
    ["item JSON cannot encode", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [{ metadata: { name: "big" }, n: 1n } as never],
      })],
  ];
  for (const [name, call] of bad) {
    await assert.rejects(call(), TypeError, name);
  }
  const kept = await loadCheckpoint(storage, "k", IDENTITY);
  assert.equal(kept?.resourceVersion, "1");
  assert.equal(kept?.items.length, 2);
});

test("saveCheckpoint turns a storage failure into a CheckpointError (storage) with the cause", async () => {
  const failure = new Error("quota exceeded");
  const storage: CheckpointStorage = {
    get: () => Promise.resolve(undefined),
    delete: () => Promise.resolve(),
    async put(_key, data) {
      for await (const _ of data) throw failure;
    },
  };
  await assert.rejects(
    saveCheckpoint(storage, "k", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(1),
    }),
    (err) => err instanceof CheckpointError && err.reason === "storage" && err.cause === failure,
  );
  const lazy: CheckpointStorage = { ...storage, put: () => Promise.resolve() }; // never reads its data
  await assert.rejects(
    saveCheckpoint(lazy, "k", { identity: IDENTITY, resourceVersion: "1", items: [] }),
    (err) => err instanceof CheckpointError && err.reason === "storage",
  );
});

test("saveCheckpoint rejects with the abort reason and keeps the previous checkpoint", async () => {
  const storage = memoryCheckpointStorage();
  await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items: [] });
  const ac = new AbortController();
  const pending = saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "2",
    items: configMaps(3000, 1000),
  }, { signal: ac.signal });
  setTimeout(() => ac.abort(new Error("stop saving")), 0);
  await assert.rejects(pending, /stop saving/);
  assert.equal((await loadCheckpoint(storage, "k", IDENTITY))?.resourceVersion, "1");
  await assert.rejects(
    saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "3", items: [] }, {
      signal: ac.signal,
    }),
    /stop saving/,
  );
});

test("saveCheckpoint rejects with the abort reason while the storage's put never answers, whether or not it reads its data", async () => {
  const silent: CheckpointStorage = { ...memoryCheckpointStorage(), put: () => never() };
  const stalled: CheckpointStorage = {
    ...memoryCheckpointStorage(),
    async put(_key, data) {
      for await (const _ of data) await never(); // takes one chunk, then waits forever
    },
  };
  for (const storage of [silent, stalled]) {
    const ac = new AbortController();
    const pending = saveCheckpoint(storage, "k", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(3),
    }, { signal: ac.signal });
    await turn();
    ac.abort(new Error("gave up on put"));
    await assert.rejects(pending, /gave up on put/);
  }
});

test("saveCheckpoint says in its message what the storage's error says", async () => {
  const eacces = Object.assign(new Error("EACCES: permission denied, open '/var/ckpt/k.tmp'"), {
    code: "EACCES",
  });
  const storage: CheckpointStorage = {
    ...memoryCheckpointStorage(),
    put: () => Promise.reject(eacces),
  };
  await assert.rejects(
    saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items: [] }),
    (err) => {
      assert.ok(err instanceof CheckpointError && err.reason === "storage");
      assert.equal(err.cause, eacces);
      assert.equal(
        err.message,
        `checkpoint "k": the storage failed to save it: EACCES: permission denied, open '/var/ckpt/k.tmp' (storage)`,
      );
      return true;
    },
  );
});

test("saveCheckpoint's errors never quote the objects or changes it was given", async () => {
  const storage = new MapStorage();
  await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items: [] });
  const secret = { password: "hunter2" };
  const cyclic: Record<string, unknown> = { metadata: { name: "c" }, data: secret };
  cyclic.self = cyclic;
  const bad: [string, () => Promise<unknown>][] = [
    ["an item without metadata", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [{ kind: "Secret", data: secret } as never],
      })],
    ["an item JSON cannot encode", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [{ metadata: { name: "big" }, data: secret, n: 1n } as never],
      })],
    ["a cyclic item", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [cyclic as never],
      })],
    ["a change that is no object", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [],
        changes: {
          since: "1",
          objects: [["default/s", { kind: "Secret", data: secret } as never]],
        },
      })],
    ["a change JSON cannot encode", () =>
      saveCheckpoint(storage, "k", {
        identity: IDENTITY,
        resourceVersion: "2",
        items: [],
        changes: { since: "1", objects: [["default/c", cyclic as never]] },
      })],
  ];
  for (const [name, call] of bad) {
    await assert.rejects(call(), (err) => {
      assert.ok(err instanceof TypeError, `${name}: ${err}`);
      assert.doesNotMatch(err.message, /hunter2/, name);
      return true;
    });
  }
  assert.equal((await loadCheckpoint(storage, "k", IDENTITY))?.resourceVersion, "1");
  // a damaged checkpoint holding a secret is replaced, never quoted
  storage.values.set(
    "k",
    new TextEncoder().encode('{"format":"kube-reflector-checkpoint","hunter2\n'),
  );
  const saved = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "3",
    items: [],
  });
  assert.equal(saved.written, "base");
});
