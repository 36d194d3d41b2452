import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointIdentity } from "../../src/checkpoint/checkpoint_identity.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { memoryCheckpointStorage } from "../../src/checkpoint/memory_checkpoint_storage.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import {
  bytesStorage,
  checkpointBytes,
  chunksThen,
  configMap,
  configMaps,
  dec,
  enc,
  IDENTITY,
  never,
  stallingValue,
  turn,
} from "./_helpers.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";

const isReason = (...reasons: string[]) => (err: unknown) => {
  assert.ok(err instanceof CheckpointError, `not a CheckpointError: ${err}`);
  assert.ok(
    reasons.includes(err.reason),
    `reason ${err.reason}, expected ${reasons.join("|")}: ${err.message}`,
  );
  return true;
};

test("loadCheckpoint round-trips objects, resourceVersion and identity exactly", async () => {
  const storage = memoryCheckpointStorage();
  const items = [...configMaps(50), { metadata: { name: "bare" } }];
  const before = Date.now();
  const saved = await saveCheckpoint(storage, "cms", {
    identity: IDENTITY,
    resourceVersion: "123456",
    items,
  });
  const loaded = await loadCheckpoint(storage, "cms", IDENTITY);
  assert.ok(loaded);
  assert.deepEqual(loaded.items, items);
  assert.equal(loaded.resourceVersion, "123456");
  assert.deepEqual(loaded.identity, IDENTITY);
  assert.equal(loaded.bytes, saved.bytes);
  assert.equal(saved.count, items.length);
  const savedAt = Date.parse(loaded.savedAt);
  assert.ok(savedAt >= before - 1000 && savedAt <= Date.now() + 1000, loaded.savedAt);
});

test("loadCheckpoint round-trips an empty checkpoint and resolves undefined when there is none", async () => {
  const storage = memoryCheckpointStorage();
  assert.equal(await loadCheckpoint(storage, "none", IDENTITY), undefined);
  await saveCheckpoint(storage, "empty", { identity: IDENTITY, resourceVersion: "1", items: [] });
  const loaded = await loadCheckpoint(storage, "empty", IDENTITY);
  assert.deepEqual(loaded?.items, []);
  assert.equal(loaded?.resourceVersion, "1");
});

test("loadCheckpoint decodes a checkpoint fed one byte at a time", async () => {
  const items = configMaps(5);
  const bytes = await checkpointBytes(items);
  const loaded = await loadCheckpoint(bytesStorage(bytes, 1), "k", IDENTITY);
  assert.deepEqual(loaded?.items, items);
});

test("loadCheckpoint decodes exactly whatever the chunk boundary, inside multi-byte UTF-8 characters included", async () => {
  const items = [configMap(0, 40), configMap(1, 40)];
  const bytes = await checkpointBytes(items);
  // the object lines hold 2-, 3- and 4-byte characters: some cuts fall inside them
  const multiByteStarts = [...bytes.keys()].filter((i) => bytes[i] >= 0xc0).length;
  assert.ok(multiByteStarts > 10);
  for (let cut = 1; cut < bytes.length; cut++) {
    const storage = {
      ...bytesStorage(bytes),
      get: () =>
        Promise.resolve(
          chunksThen([bytes.slice(0, cut), bytes.slice(cut)]) as AsyncIterable<Uint8Array>,
        ),
    };
    const loaded = await loadCheckpoint(storage, "k", IDENTITY);
    assert.deepEqual(loaded?.items, items, `cut at ${cut}`);
  }
});

test("loadCheckpoint rejects a checkpoint with any one byte changed, and an object byte as corrupt", async () => {
  const bytes = await checkpointBytes([configMap(0, 40), configMap(1, 40)]);
  const text = dec.decode(bytes);
  const firstObject = text.indexOf("\n") + 1;
  const trailer = text.lastIndexOf("\n", text.length - 2) + 1;
  const objectStart = enc.encode(text.slice(0, firstObject)).length;
  const objectEnd = enc.encode(text.slice(0, trailer)).length;
  for (let i = 0; i < bytes.length; i++) {
    for (const mask of [0x01, 0x20, 0x80]) {
      const damaged = bytes.slice();
      damaged[i] ^= mask;
      await assert.rejects(
        loadCheckpoint(bytesStorage(damaged, 97), "k", IDENTITY),
        // a change of the header's version digit reads as a newer format
        i >= objectStart && i < objectEnd
          ? isReason("corrupt")
          : isReason("corrupt", "truncated", "newer-format"),
        `byte ${i} ^ ${mask}`,
      );
    }
  }
});

test("loadCheckpoint rejects a checkpoint cut anywhere as truncated, the empty value included", async () => {
  const bytes = await checkpointBytes(configMaps(3, 40));
  for (let cut = 0; cut < bytes.length; cut++) {
    await assert.rejects(
      loadCheckpoint(bytesStorage(bytes.slice(0, cut), 7), "k", IDENTITY),
      isReason("truncated"),
      `cut at ${cut}`,
    );
  }
});

test("loadCheckpoint rejects data after the end marker, and a line missing or added, as corrupt", async () => {
  const bytes = await checkpointBytes(configMaps(3, 40));
  const lines = dec.decode(bytes).split("\n");
  const variants = {
    "trailing newline": dec.decode(bytes) + "\n",
    "trailing object": dec.decode(bytes) + lines[1] + "\n",
    "object dropped": [lines[0], lines[1], lines[3], lines[4], ""].join("\n"),
    "object repeated": [lines[0], lines[1], lines[1], lines[2], lines[3], lines[4], ""].join("\n"),
    "objects swapped": [lines[0], lines[2], lines[1], lines[3], lines[4], ""].join("\n"),
  };
  for (const [name, text] of Object.entries(variants)) {
    await assert.rejects(
      loadCheckpoint(bytesStorage(enc.encode(text)), "k", IDENTITY),
      isReason("corrupt"),
      name,
    );
  }
});

test("loadCheckpoint rejects what is not a checkpoint at all: HTML, garbage, other JSON, invalid UTF-8", async () => {
  const random = new Uint8Array(4096);
  for (let i = 0; i < random.length; i++) random[i] = (i * 7919 + 13) % 251;
  const cases: Record<string, Uint8Array> = {
    html: enc.encode("<!DOCTYPE html>\n<html><body>502 Bad Gateway</body></html>\n"),
    garbage: random,
    "no newline at all": enc.encode("{".repeat(200_000)),
    "a JSON list": enc.encode(JSON.stringify({ kind: "ConfigMapList", items: [] }) + "\n"),
    "a JSON array": enc.encode("[1,2,3]\n"),
    "invalid UTF-8": new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]),
    "a byte order mark": enc.encode("\ufeff" + dec.decode(await checkpointBytes([]))),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    await assert.rejects(
      loadCheckpoint(bytesStorage(bytes), "k", IDENTITY),
      isReason("corrupt"),
      name,
    );
  }
  await assert.rejects(
    loadCheckpoint(bytesStorage(new Uint8Array(0)), "k", IDENTITY),
    isReason("truncated"),
    "empty",
  );
});

test("loadCheckpoint rejects a checkpoint of another cluster or server as foreign-cluster", async () => {
  const bytes = await checkpointBytes(configMaps(2));
  const cases: [CheckpointIdentity, RegExp][] = [
    [{ ...IDENTITY, cluster: "another-uid" }, /cluster differs: .*"another-uid"/],
    [{ ...IDENTITY, server: "https://other.example.com:6443" }, /server differs/],
    [{ ...IDENTITY, server: "https://k8s.example.com:6443/prefix" }, /server differs/],
  ];
  for (const [expected, message] of cases) {
    await assert.rejects(loadCheckpoint(bytesStorage(bytes), "k", expected), (err) => {
      assert.ok(isReason("foreign-cluster")(err));
      assert.match((err as Error).message, message);
      return true;
    });
  }
  // cluster is compared only when both sides have one; the server is normalized
  const { cluster: _, ...noCluster } = IDENTITY;
  assert.ok(await loadCheckpoint(bytesStorage(bytes), "k", noCluster));
  assert.ok(
    await loadCheckpoint(bytesStorage(bytes), "k", {
      ...IDENTITY,
      server: "https://K8S.example.com:6443/",
    }),
  );
});

test("loadCheckpoint rejects a checkpoint of another resource, namespace, selector or metadataOnly as foreign-resource", async () => {
  const bytes = await checkpointBytes(configMaps(2));
  const others: Partial<CheckpointIdentity>[] = [
    { apiVersion: "v2" },
    { resource: "secrets" },
    { namespace: "kube-system" },
    { namespace: undefined },
    { labelSelector: "app=db" },
    { labelSelector: undefined },
    { fieldSelector: "metadata.name=a" },
    { metadataOnly: true },
  ];
  for (const other of others) {
    const field = Object.keys(other)[0];
    await assert.rejects(
      loadCheckpoint(bytesStorage(bytes), "k", { ...IDENTITY, ...other }),
      (err) => {
        assert.ok(isReason("foreign-resource")(err));
        assert.match((err as Error).message, new RegExp(`${field} differs`));
        return true;
      },
      field,
    );
  }
  // selectors compare trimmed
  assert.ok(
    await loadCheckpoint(bytesStorage(bytes), "k", { ...IDENTITY, labelSelector: " app=web " }),
  );
});

test("loadCheckpoint reports a damaged foreign checkpoint as corrupt, not foreign", async () => {
  const bytes = await checkpointBytes(configMaps(2));
  const damaged = bytes.slice();
  damaged[damaged.length - 60] ^= 0x01;
  await assert.rejects(
    loadCheckpoint(bytesStorage(damaged), "k", { ...IDENTITY, resource: "secrets" }),
    isReason("corrupt"),
  );
});

test("loadCheckpoint rejects a newer format version with newer-format, without reading further", async () => {
  const header = {
    format: "kube-reflector-checkpoint",
    version: 2,
    savedAt: new Date().toISOString(),
    somethingNew: { resourceVersions: ["1", "2"] },
  };
  const text = JSON.stringify(header) + "\n" + "whatever version 2 holds\n".repeat(10);
  await assert.rejects(
    loadCheckpoint(bytesStorage(enc.encode(text)), "k", IDENTITY),
    (err) => isReason("newer-format")(err) && /version 2/.test((err as Error).message),
  );
  const version0 = JSON.stringify({ ...header, version: 0 }) + "\n";
  await assert.rejects(
    loadCheckpoint(bytesStorage(enc.encode(version0)), "k", IDENTITY),
    isReason("corrupt"),
  );
});

test("loadCheckpoint never hands out part of a checkpoint: a read failing midway is a storage error", async () => {
  const bytes = await checkpointBytes(configMaps(20));
  const failure = new Error("disk on fire");
  const storage = {
    ...bytesStorage(bytes),
    get: () =>
      Promise.resolve(
        chunksThen([bytes.slice(0, bytes.length - 10)], failure) as AsyncIterable<Uint8Array>,
      ),
  };
  await assert.rejects(loadCheckpoint(storage, "k", IDENTITY), (err) => {
    assert.ok(isReason("storage")(err));
    assert.equal((err as Error).cause, failure);
    return true;
  });
  const getFails = { ...bytesStorage(bytes), get: () => Promise.reject(failure) };
  await assert.rejects(loadCheckpoint(getFails, "k", IDENTITY), isReason("storage"));
});

test("loadCheckpoint rejects with the abort reason, before or while reading", async () => {
  const bytes = await checkpointBytes(configMaps(20));
  const ac = new AbortController();
  ac.abort(new Error("stop"));
  await assert.rejects(
    loadCheckpoint(bytesStorage(bytes), "k", IDENTITY, { signal: ac.signal }),
    /stop/,
  );
  const mid = new AbortController();
  let chunks = 0;
  const storage = {
    ...bytesStorage(bytes),
    get: () =>
      Promise.resolve((async function* () {
        for (let i = 0; i < bytes.length; i += 100) {
          if (++chunks === 3) mid.abort(new Error("stopped midway"));
          yield bytes.slice(i, i + 100);
        }
      })()),
  };
  await assert.rejects(
    loadCheckpoint(storage, "k", IDENTITY, { signal: mid.signal }),
    /stopped midway/,
  );
});

test("loadCheckpoint's errors never quote the checkpoint's content", async () => {
  const secretLine = '{"metadata":{"name":"x"},"data":{"password":"hunter2"}'; // no closing brace
  const bytes = await checkpointBytes([{ metadata: { name: "x" }, data: { password: "hunter2" } }]);
  const text = dec.decode(bytes);
  const broken = text.replace(
    '{"metadata":{"name":"x"},"data":{"password":"hunter2"}}',
    secretLine,
  );
  await assert.rejects(loadCheckpoint(bytesStorage(enc.encode(broken)), "k", IDENTITY), (err) => {
    assert.ok(isReason("corrupt")(err));
    assert.doesNotMatch((err as Error).message, /hunter2/);
    return true;
  });
});

/** A storage whose `get` is `get`; put and delete are never called. */
const getting = (get: CheckpointStorage["get"]): CheckpointStorage => ({
  get,
  put: () => never(),
  delete: () => never(),
});

test("loadCheckpoint rejects with the abort reason while the storage's get never answers, and releases a value it returns later", async () => {
  const ac = new AbortController();
  let answer!: (value: AsyncIterable<Uint8Array>) => void;
  const storage = getting(() => new Promise((resolve) => (answer = resolve)));
  const pending = loadCheckpoint(storage, "k", IDENTITY, { signal: ac.signal });
  await turn();
  ac.abort(new Error("gave up on get"));
  await assert.rejects(pending, /gave up on get/);
  const late = stallingValue([enc.encode("{")]);
  answer(late);
  await turn();
  assert.deepEqual(late.log, ["return"], "released, never read");
});

test("loadCheckpoint rejects with the abort reason while a read of the value never answers, and starts its release", async () => {
  const bytes = await checkpointBytes(configMaps(5));
  const value = stallingValue([bytes.slice(0, 100)]);
  const ac = new AbortController();
  const pending = loadCheckpoint(getting(() => Promise.resolve(value)), "k", IDENTITY, {
    signal: ac.signal,
  });
  await turn();
  assert.deepEqual(value.log, ["next", "next"], "the second read hangs");
  ac.abort(new Error("gave up on the read"));
  await assert.rejects(pending, /gave up on the read/);
  assert.deepEqual(value.log, ["next", "next", "return"]);
});

test("loadCheckpoint releases the value when the signal aborts as the get answers, before any read", async () => {
  const ac = new AbortController();
  const value = stallingValue([]);
  const storage = getting(() => {
    ac.abort(new Error("aborted during get"));
    return Promise.resolve(value);
  });
  await assert.rejects(
    loadCheckpoint(storage, "k", IDENTITY, { signal: ac.signal }),
    /aborted during get/,
  );
  await turn();
  assert.deepEqual(value.log, ["return"]);
});

test("loadCheckpoint says in its message what the storage's error says, without secrets", async () => {
  const enotdir = Object.assign(
    new Error("ENOTDIR: not a directory, open '/var/ckpt/k.checkpoint'"),
    { code: "ENOTDIR", syscall: "open", path: "/var/ckpt/k.checkpoint" },
  );
  await assert.rejects(
    loadCheckpoint(getting(() => Promise.reject(enotdir)), "k", IDENTITY),
    (err) => {
      assert.ok(isReason("storage")(err));
      assert.equal((err as Error).cause, enotdir);
      assert.equal(
        (err as Error).message,
        `checkpoint "k": the storage failed to read it: ENOTDIR: not a directory, open '/var/ckpt/k.checkpoint' (storage)`,
      );
      return true;
    },
  );
  const leaky = new TypeError(
    "GET https://user:hunter2@s3.example.com/bucket/k?X-Amz-Signature=abc123 failed; authorization: Bearer tok-987 token=tok-654",
  );
  await assert.rejects(
    loadCheckpoint(getting(() => Promise.reject(leaky)), "k", IDENTITY),
    (err) => {
      const message = (err as Error).message;
      assert.match(
        message,
        /failed to read it: TypeError: GET https:\/\/s3\.example\.com\/bucket\/k failed/,
      );
      assert.doesNotMatch(message, /hunter2|abc123|tok-987|tok-654/);
      return true;
    },
  );
  const coded = Object.assign(new Error("permission denied"), { code: "EACCES" });
  await assert.rejects(
    loadCheckpoint(getting(() => Promise.reject(coded)), "k", IDENTITY),
    /failed to read it: EACCES: permission denied \(storage\)/,
  );
});
