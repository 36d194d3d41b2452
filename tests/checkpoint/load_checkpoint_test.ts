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
import type { KubeObject } from "../../src/api/types.ts";
import { MapStorage, namedPieces } from "./_map_storage.ts";
import { Fnv1a4 } from "../../src/checkpoint/_fnv1a.ts";

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

/**
 * A head or log piece (lines, the last an end marker with a `checksum`)
 * with its checksum computed again over the lines before the end marker.
 */
function withChecksum(text: string): string {
  const lines = text.slice(0, -1).split("\n");
  const body = lines.slice(0, -1).join("\n") + "\n";
  const hash = new Fnv1a4();
  hash.update(enc.encode(body));
  const end = JSON.parse(lines[lines.length - 1]);
  if (end.checksum === undefined) return text; // a snapshot: its checksum is not recomputed
  return body + JSON.stringify({ ...end, checksum: hash.digest() }) + "\n";
}

/**
 * An incremental checkpoint under "k": a snapshot of `count` ConfigMaps at
 * version 10, then a log piece (cm-1 changed, cm-2 deleted, cm-new added)
 * to version 11. Returns the storage and the objects it holds.
 */
async function incremental(count = 5, size = 200): Promise<{
  storage: MapStorage;
  expected: KubeObject[];
}> {
  const storage = new MapStorage();
  const items = configMaps(count, size);
  await saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "10", items });
  const changed = { ...configMap(1, 40), data: { secret: "hunter2" } };
  const added = { ...configMap(99, 40), metadata: { name: "cm-new", namespace: "default" } };
  const expected = [items[0], changed, ...items.slice(3), added];
  const saved = await saveCheckpoint(storage, "k", {
    identity: IDENTITY,
    resourceVersion: "11",
    items: expected,
    changes: {
      since: "10",
      objects: [["default/cm-1", changed], ["default/cm-2", undefined], ["default/cm-new", added]],
    },
  }, { maxLogRatio: 100 }); // a log piece, however small the snapshot
  assert.equal(saved.written, "log");
  return { storage, expected };
}

test("loadCheckpoint decodes a checkpoint fed one byte at a time", async () => {
  const items = configMaps(5);
  const bytes = await checkpointBytes(items);
  const loaded = await loadCheckpoint(bytesStorage(bytes, 1), "k", IDENTITY);
  assert.deepEqual(loaded?.items, items);
  // a head, its snapshot and its log piece, each fed one byte at a time
  const { storage, expected } = await incremental();
  storage.chunkSize = 1;
  const again = await loadCheckpoint(storage, "k", IDENTITY);
  assert.deepEqual(again?.items, expected);
  assert.equal(again?.resourceVersion, "11");
  assert.equal(again?.values, 3);
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
  // every value of an incremental checkpoint (head, snapshot, log piece) cut in two
  const { storage, expected } = await incremental(2, 40);
  const longest = Math.max(...[...storage.values.values()].map((v) => v.byteLength));
  for (let cut = 1; cut < longest; cut++) {
    storage.split = (value) => [value.subarray(0, cut), value.subarray(cut)];
    const loaded = await loadCheckpoint(storage, "k", IDENTITY);
    assert.deepEqual(loaded?.items, expected, `incremental, cut at ${cut}`);
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

test("loadCheckpoint rejects an incremental checkpoint with any one byte of its head, snapshot or log piece changed", async () => {
  const { storage } = await incremental(2, 40);
  const original = new Map(storage.values);
  const head = original.get("k")!;
  const [base, log] = namedPieces(original, "k");
  assert.match(base, /\/base\//);
  assert.match(log, /\/log\//);
  const checks: [string, (err: unknown) => boolean][] = [
    // a head whose version digit changed reads as a newer format
    ["k", isReason("corrupt", "truncated", "newer-format")],
    [base, isReason("corrupt", "truncated", "newer-format")],
    [log, isReason("corrupt")],
  ];
  for (const [key, check] of checks) {
    const value = original.get(key)!;
    for (let i = 0; i < value.length; i++) {
      for (const mask of [0x01, 0x20, 0x80]) {
        const damaged = value.slice();
        damaged[i] ^= mask;
        storage.values.set(key, damaged);
        await assert.rejects(
          loadCheckpoint(storage, "k", IDENTITY),
          check,
          `${key}: byte ${i} ^ ${mask}`,
        );
      }
    }
    storage.values.set(key, value);
  }
  assert.equal(storage.values.get("k"), head);
  assert.ok(await loadCheckpoint(storage, "k", IDENTITY), "whole again");
});

test("loadCheckpoint rejects an incremental checkpoint with its head, snapshot or log piece cut anywhere", async () => {
  const { storage } = await incremental(2, 40);
  const original = new Map(storage.values);
  const [base, log] = namedPieces(original, "k");
  const checks: [string, (err: unknown) => boolean][] = [
    ["k", isReason("corrupt", "truncated")],
    [base, isReason("truncated")],
    [log, isReason("corrupt", "truncated")], // its size is in the head
  ];
  for (const [key, check] of checks) {
    const value = original.get(key)!;
    for (let cut = 0; cut < value.length; cut++) {
      storage.values.set(key, value.slice(0, cut));
      await assert.rejects(loadCheckpoint(storage, "k", IDENTITY), check, `${key}: cut at ${cut}`);
    }
    storage.values.set(key, value);
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
  // an old checkpoint at the key, and a head with its snapshot and log
  for (const storage of [bytesStorage(bytes), (await incremental()).storage]) {
    for (const [expected, message] of cases) {
      await assert.rejects(loadCheckpoint(storage, "k", expected), (err) => {
        assert.ok(isReason("foreign-cluster")(err));
        assert.match((err as Error).message, message);
        return true;
      });
    }
    // cluster is compared only when both sides have one; the server is normalized
    const { cluster: _, ...noCluster } = IDENTITY;
    assert.ok(await loadCheckpoint(storage, "k", noCluster));
    assert.ok(
      await loadCheckpoint(storage, "k", {
        ...IDENTITY,
        server: "https://K8S.example.com:6443/",
      }),
    );
  }
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
  // an old checkpoint at the key, and a head with its snapshot and log
  for (const storage of [bytesStorage(bytes), (await incremental()).storage]) {
    for (const other of others) {
      const field = Object.keys(other)[0];
      await assert.rejects(
        loadCheckpoint(storage, "k", { ...IDENTITY, ...other }),
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
      await loadCheckpoint(storage, "k", { ...IDENTITY, labelSelector: " app=web " }),
    );
  }
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
    version: 3,
    savedAt: new Date().toISOString(),
    somethingNew: { resourceVersions: ["1", "2"] },
  };
  const text = JSON.stringify(header) + "\n" + "whatever version 3 holds\n".repeat(10);
  let reads = 0;
  const storage = getting(() =>
    Promise.resolve((async function* () {
      for (const line of text.split(/(?<=\n)/)) {
        reads++;
        yield enc.encode(line);
      }
    })())
  );
  await assert.rejects(
    loadCheckpoint(storage, "k", IDENTITY),
    (err) =>
      isReason("newer-format")(err) &&
      /format version 3, newer than this library's \(2\)/.test((err as Error).message),
  );
  assert.equal(reads, 1, "only the first line was read");
  // a snapshot piece of a newer format (a head of this version naming it) is refused too
  const { storage: saved } = await incremental();
  const [base] = namedPieces(saved.values, "k");
  saved.values.set(base, enc.encode(text));
  await assert.rejects(loadCheckpoint(saved, "k", IDENTITY), isReason("newer-format"));
  const version0 = JSON.stringify({ ...header, version: 0 }) + "\n";
  await assert.rejects(
    loadCheckpoint(bytesStorage(enc.encode(version0)), "k", IDENTITY),
    isReason("corrupt"),
  );
  // a head of this version that is not whole is damaged, not newer
  const version2 = JSON.stringify({ ...header, version: 2 }) + "\n" + "garbage\n";
  await assert.rejects(
    loadCheckpoint(bytesStorage(enc.encode(version2)), "k", IDENTITY),
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
  const quotesNothing = (err: unknown) => {
    assert.ok(err instanceof CheckpointError, String(err));
    assert.doesNotMatch(err.message, /hunter2/);
    assert.doesNotMatch(String(err.cause ?? ""), /hunter2/);
    return true;
  };
  await assert.rejects(
    loadCheckpoint(bytesStorage(enc.encode(broken)), "k", IDENTITY),
    (err) => isReason("corrupt")(err) && quotesNothing(err),
  );
  // an incremental checkpoint: its log piece holds "hunter2" (the change of cm-1);
  // each value damaged with its checksum made right again, so that it is parsed
  const { storage } = await incremental();
  const original = new Map(storage.values);
  const [base, log] = namedPieces(original, "k");
  assert.match(dec.decode(original.get(log)!), /hunter2/);
  const damage: [key: string, from: string, to: string, message: RegExp][] = [
    [log, '"secret":"hunter2"}', '"secret":"hunter2"!', /change 1 is not JSON/],
    [log, '{"k":"default/cm-1","o":{', '{"k":"default/cm-1","o":[', /change 1 is not JSON/],
    [log, '"metadata":{"name":"cm-1"', '"metadatx":{"name":"cm-1"', /not a Kubernetes object/],
    [base, '"name":"cm-3"', '"name":hunter2"', /corrupt/],
    ["k", '"resourceVersion":"11"', '"resourceVersion":11.0', /the head is malformed/],
    ["k", '"resourceVersion":"11"', '"resourceVersion":hunter2', /corrupt/],
  ];
  for (const [key, from, to, message] of damage) {
    const text = dec.decode(original.get(key)!);
    assert.ok(text.includes(from), from);
    storage.values.set(key, enc.encode(withChecksum(text.replace(from, to))));
    await assert.rejects(
      loadCheckpoint(storage, "k", IDENTITY),
      (err) =>
        quotesNothing(err) && (message.test((err as Error).message) || assert.fail(String(err))),
      `${key}: ${from} -> ${to}`,
    );
    storage.values.set(key, original.get(key)!);
  }
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
