import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime, test } from "../_test.ts";
import { CheckpointError } from "../../src/checkpoint/checkpoint_error.ts";
import type { CheckpointStorage } from "../../src/checkpoint/checkpoint_storage.ts";
import { fileCheckpointStorage } from "../../src/checkpoint/file_checkpoint_storage.ts";
import { fileError } from "../../src/checkpoint/_file_io.ts";
import { resolveDir } from "../../src/checkpoint/_dir_scope.ts";
import { loadCheckpoint } from "../../src/checkpoint/load_checkpoint.ts";
import { saveCheckpoint } from "../../src/checkpoint/save_checkpoint.ts";
import { chunksThen, configMaps, enc, IDENTITY, readAll, turn } from "./_helpers.ts";
import { storageContract } from "./_storage_contract.ts";

async function tempDir(): Promise<{ dir: string; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "kube-reflector-ckpt-"));
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
}

storageContract("fileCheckpointStorage", async () => {
  const { dir, close } = await tempDir();
  return { storage: fileCheckpointStorage(join(dir, "nested", "dir")), close };
});

test("fileCheckpointStorage names files after keys so that no key reaches outside its directory", async () => {
  const { dir, close } = await tempDir();
  try {
    const inner = join(dir, "inner");
    const storage = fileCheckpointStorage(inner);
    const keys = ["../escape", "..", ".", ".hidden", "a/b", "a\\b", "/etc/passwd", "pods", "x.y*"];
    for (const key of keys) await storage.put(key, chunksThen([enc.encode(key)]));
    assert.deepEqual(await readdir(dir), ["inner"]);
    assert.deepEqual(
      (await readdir(inner)).sort(),
      [
        "%2E",
        "%2E%2E",
        "%2E%2E%2Fescape",
        "%2Ehidden",
        "%2Fetc%2Fpasswd",
        "a%2Fb",
        "a%5Cb",
        "pods",
        "x%2Ey%2A",
      ].map((n) => `${n}.checkpoint`).sort(),
    );
    for (const key of keys) {
      assert.equal(new TextDecoder().decode(await readAll((await storage.get(key))!)), key);
    }
    await assert.rejects(storage.put("", chunksThen([])), TypeError);
    await assert.rejects(storage.get("x".repeat(300)), RangeError);
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: a save whose data throws midway leaves the old file readable and no temporary file", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(100),
    });
    const files = await readdir(dir);
    assert.equal(files.length, 2, "a head and its snapshot");
    const before = await readFile(join(dir, "cms.checkpoint"));
    const failure = new Error("crashed between two chunks");
    await assert.rejects(
      storage.put(
        "cms",
        chunksThen(
          [enc.encode('{"format":"kube-reflector-checkpoint"\n'), new Uint8Array(100_000)],
          failure,
        ),
      ),
      (err) => err === failure,
    );
    assert.deepEqual(await readdir(dir), files);
    assert.deepEqual(await readFile(join(dir, "cms.checkpoint")), before);
    const loaded = await loadCheckpoint(storage, "cms", IDENTITY);
    assert.deepEqual(loaded?.items, configMaps(100));
  } finally {
    await close();
  }
});

test("fileCheckpointStorage never reads a temporary file a killed process left behind", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "1",
      items: configMaps(3),
    });
    await writeFile(
      join(dir, "cms.checkpoint.tmp-dead"),
      '{"format":"kube-reflector-checkpoint","vers',
    );
    assert.equal((await loadCheckpoint(storage, "cms", IDENTITY))?.resourceVersion, "1");
    await saveCheckpoint(storage, "cms", {
      identity: IDENTITY,
      resourceVersion: "2",
      items: configMaps(3),
    });
    assert.equal((await loadCheckpoint(storage, "cms", IDENTITY))?.resourceVersion, "2");
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: a get reads the file it opened, even if a put replaces it meanwhile", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    const old = new Uint8Array(200_000).fill(0x61);
    await storage.put("k", chunksThen([old]));
    const reading = (await storage.get("k"))!;
    await storage.put("k", chunksThen([new Uint8Array(300_000).fill(0x62)]));
    assert.deepEqual(await readAll(reading), old);
  } finally {
    await close();
  }
});

test("fileCheckpointStorage closes the file when a reader leaves early", async () => {
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await storage.put("k", chunksThen([new Uint8Array(300_000)]));
    for await (const _ of (await storage.get("k"))!) break;
    // (Deno's resource sanitizer fails this test if the file stayed open)
  } finally {
    await close();
  }
});

/** How many file descriptors this process has open (Linux), or `undefined` where unknown. */
async function openFds(): Promise<number | undefined> {
  try {
    return (await readdir("/proc/self/fd")).length;
  } catch {
    return undefined;
  }
}

/** The open descriptors once they are back to `count` (or after 200 turns, whatever they are). */
async function fdsSettle(count: number): Promise<number | undefined> {
  let now = await openFds();
  for (let i = 0; i < 200 && now !== undefined && now > count; i++) {
    await turn();
    now = await openFds();
  }
  return now;
}

test("fileCheckpointStorage: aborted loads leave no file open, wherever the abort comes", async () => {
  const before = await openFds();
  if (before === undefined) return console.log("skipped: no /proc/self/fd here");
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    const items = configMaps(300, 1000); // two reads of 256 KiB
    await saveCheckpoint(storage, "cms", { identity: IDENTITY, resourceVersion: "1", items });
    const abortAfter = async (wait: () => Promise<void>, on: CheckpointStorage = storage) => {
      const ac = new AbortController();
      const pending = loadCheckpoint(on, "cms", IDENTITY, { signal: ac.signal });
      await wait();
      ac.abort(new Error("aborted load"));
      // (a small file may be read whole before a late abort)
      await pending.then(() => {}, (err) => assert.equal(err?.message, "aborted load"));
    };
    for (let ticks = 0; ticks < 30; ticks++) {
      await abortAfter(async () => {
        for (let i = 0; i < ticks; i++) await Promise.resolve();
      });
    }
    for (let turns = 0; turns < 4; turns++) {
      await abortAfter(async () => {
        for (let i = 0; i < turns; i++) await turn();
      });
    }
    // the abort as the file is opened, before its first read
    let abortNow = () => {};
    const abortingGet: CheckpointStorage = {
      ...storage,
      get: async (key, options) => {
        const value = await storage.get(key, options);
        abortNow();
        return value;
      },
    };
    await abortAfter(() => new Promise((resolve) => (abortNow = resolve)), abortingGet);
    assert.equal(await fdsSettle(before), before, "every file closed");
  } finally {
    await close();
  }
});

test("fileCheckpointStorage closes the file when its reader leaves before the first read, or while a read is aborted", async () => {
  const before = await openFds();
  const { dir, close } = await tempDir();
  try {
    const storage = fileCheckpointStorage(dir);
    await storage.put("k", chunksThen([new Uint8Array(600_000)]));
    await (await storage.get("k"))![Symbol.asyncIterator]().return?.();
    const ac = new AbortController();
    const reading = (await storage.get("k", { signal: ac.signal }))![Symbol.asyncIterator]().next();
    ac.abort(new Error("aborted read"));
    await assert.rejects(reading, /aborted read/);
    if (before !== undefined) assert.equal(await fdsSettle(before), before, "every file closed");
    // (and Deno's resource sanitizer fails this test if a file stayed open)
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: a load or save that fails says why (ENOTDIR and the path)", async () => {
  const { dir, close } = await tempDir();
  try {
    const file = join(dir, "a-file");
    await writeFile(file, "not a directory");
    const storage = fileCheckpointStorage(join(file, "sub"));
    await assert.rejects(loadCheckpoint(storage, "k", IDENTITY), (err) => {
      assert.ok(err instanceof CheckpointError && err.reason === "storage");
      assert.match(
        err.message,
        /failed to read it: ENOTDIR: not a directory, open '.*a-file\/sub\/k\.checkpoint'/,
      );
      return true;
    });
    await assert.rejects(
      storage.put("k", chunksThen([enc.encode("x")])),
      /ENOTDIR: not a directory, mkdir '.*a-file\/sub'/,
    );
    await assert.rejects(
      saveCheckpoint(storage, "k", { identity: IDENTITY, resourceVersion: "1", items: [] }),
      (err) => {
        assert.ok(err instanceof CheckpointError && err.reason === "storage");
        // the save reads the head first
        assert.match(
          err.message,
          /failed to save it: ENOTDIR: not a directory, open '.*a-file\/sub\/k\.checkpoint'/,
        );
        return true;
      },
    );
  } finally {
    await close();
  }
});

test("fileCheckpointStorage turns Deno's missing permission into the flag to add, for the storage's directory", () => {
  const notCapable = Object.assign(
    new Error(
      'Requires write access to "/ckpt/k.checkpoint.tmp-1", run again with the --allow-write flag',
    ),
    { name: "NotCapable" },
  );
  const wrapped = fileError(notCapable, "write", "/ckpt") as Error;
  assert.equal(wrapped.message, 'Deno may not write "/ckpt": run it with --allow-write=/ckpt');
  assert.equal(wrapped.cause, notCapable);
  // Deno 1 threw PermissionDenied; the text says which access, whatever the operation
  const deno1 = Object.assign(
    new Error('Requires read access to "/ckpt", run again with the --allow-read flag'),
    { name: "PermissionDenied" },
  );
  assert.match((fileError(deno1, "write", "/ckpt") as Error).message, /--allow-read=\/ckpt$/);
  // the operating system's refusal is no flag: passed on as it is
  const eacces = Object.assign(new Error("Permission denied (os error 13)"), {
    name: "PermissionDenied",
  });
  assert.equal(fileError(eacces, "read", "/ckpt"), eacces);
});

test("fileCheckpointStorage under Deno without --allow-read or --allow-write names the flag and the directory", async () => {
  // deno-lint-ignore no-explicit-any
  const deno = (globalThis as any).Deno;
  if (runtime !== "deno") return console.log("skipped: a Deno permission test");
  const { dir, close } = await tempDir();
  try {
    const root = new URL("../../", import.meta.url);
    const script = join(dir, "probe.ts");
    await writeFile(
      script,
      `import { fileCheckpointStorage } from ${
        JSON.stringify(new URL("src/checkpoint/file_checkpoint_storage.ts", root).href)
      };
import { loadCheckpoint } from ${
        JSON.stringify(new URL("src/checkpoint/load_checkpoint.ts", root).href)
      };
import { saveCheckpoint } from ${
        JSON.stringify(new URL("src/checkpoint/save_checkpoint.ts", root).href)
      };
const storage = fileCheckpointStorage(${JSON.stringify(join(dir, "ckpt"))});
const identity = { server: "https://k8s.example.com", apiVersion: "v1", resource: "pods" };
const out = [];
for (const run of [
  () => saveCheckpoint(storage, "k", { identity, resourceVersion: "1", items: [] }),
  () => loadCheckpoint(storage, "k", identity),
]) out.push(await run().then(() => "ok", (err) => err.message));
console.log(JSON.stringify(out));
`,
    );
    const probe = async (allow: string[]) => {
      const { stdout, stderr } = await new deno.Command(deno.execPath(), {
        args: ["run", "--no-lock", "--no-config", ...allow, script],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(stdout).trim();
      assert.ok(text, new TextDecoder().decode(stderr));
      return JSON.parse(text) as string[];
    };
    const ckpt = join(dir, "ckpt");
    const readCode = `--allow-read=${root.pathname},${script}`;
    const [saveNoWrite] = await probe([`--allow-read=${root.pathname},${dir}`]);
    assert.match(
      saveNoWrite,
      new RegExp(`failed to save it: .*run it with --allow-write=${ckpt} `),
    );
    const [saveNoRead, loadNoRead] = await probe([readCode, `--allow-write=${dir}`]);
    assert.match(saveNoRead, new RegExp(`failed to save it: .*run it with --allow-read=${ckpt} `));
    assert.match(loadNoRead, new RegExp(`failed to read it: .*run it with --allow-read=${ckpt} `));
  } finally {
    await close();
  }
});

test("fileCheckpointStorage: saves through two storages on one directory take turns, however it is named", async () => {
  const { dir, close } = await tempDir();
  try {
    const items = configMaps(20);
    const save = (storage: CheckpointStorage) =>
      saveCheckpoint(storage, "cms", { identity: IDENTITY, resourceVersion: "7", items });
    const one = fileCheckpointStorage(dir);
    const same = fileCheckpointStorage(`${dir}/.//`);
    const written = (await Promise.all([save(one), save(same)])).map((r) => r.written).sort();
    assert.deepEqual(written, ["base", "none"], "the second found the first one's head");
    assert.equal((await readdir(dir)).length, 2, "one head, one snapshot");
    // another directory has its own turn
    const other = fileCheckpointStorage(join(dir, "other"));
    const another = fileCheckpointStorage(join(dir, "another"));
    const apart = (await Promise.all([save(other), save(another)])).map((r) => r.written);
    assert.deepEqual(apart, ["base", "base"]);
  } finally {
    await close();
  }
});

test("resolveDir makes a directory absolute and plain (table)", () => {
  const rows: [dir: string, cwd: string | undefined, resolved: string][] = [
    ["/var/ckpt", "/home/me", "/var/ckpt"],
    ["/var/ckpt/", "/home/me", "/var/ckpt"],
    ["/var//ckpt/./x/..", "/home/me", "/var/ckpt"],
    ["ckpt", "/home/me", "/home/me/ckpt"],
    ["./ckpt", "/home/me/", "/home/me/ckpt"],
    ["../ckpt", "/home/me", "/home/ckpt"],
    ["../../../ckpt", "/home/me", "/ckpt"],
    ["/..", "/", "/"],
    ["ckpt", undefined, "ckpt"],
    ["../ckpt", undefined, "../ckpt"],
    [".", undefined, "."],
    ["C:\\ckpt\\x\\..", "D:\\work", "C:/ckpt"],
    ["c:/ckpt", "D:\\work", "C:/ckpt"],
    ["ckpt", "D:\\work", "D:/work/ckpt"],
  ];
  for (const [dir, cwd, resolved] of rows) {
    assert.equal(resolveDir(dir, cwd), resolved, `${dir} in ${cwd}`);
  }
});
