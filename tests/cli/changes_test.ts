import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { FakeApiServer } from "../../testkit.ts";
import { checkpointKey, runChanges } from "../../src/cli/changes.ts";
import { fakeEnv } from "./_fake_env.ts";

const cm = (name: string, namespace = "app") => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace },
});

/** The changes a run printed: `TYPE namespace/name`, and each line parses as {type, object}. */
function parse(out: string): string[] {
  return out.split("\n").filter((l) => l !== "").map((line) => {
    const { type, object, ...rest } = JSON.parse(line);
    assert.deepEqual(Object.keys(rest), []);
    assert.equal(object.kind, "ConfigMap");
    return `${type} ${object.metadata.namespace}/${object.metadata.name}`;
  });
}

test("changes run three times prints exactly the changes made between runs; the first prints everything as ADDED", async () => {
  const server = await FakeApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), "cli-changes-"));
  const state = join(dir, "state", "nested"); // created if missing
  try {
    const a = server.create(cm("a"));
    server.create(cm("b"));
    server.create(cm("elsewhere", "other"));
    const args = ["cm", "-n", "app", "--state", state, "--server", server.url];

    let env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["ADDED app/a", "ADDED app/b"]);
    assert.match(env.err, /first run \(no checkpoint in .*\): every object is printed as ADDED/);

    server.update({ ...a, data: { k: "1" } });
    const c = server.create(cm("c"));
    server.delete(cm("b"));
    server.create(cm("ignored", "other"));
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["MODIFIED app/a", "ADDED app/c", "DELETED app/b"]);
    assert.equal(env.err, "");

    server.delete(c);
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["DELETED app/c"]);

    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.equal(env.out, "", "nothing changed: nothing printed");
    assert.ok((await readdir(state)).length > 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
});

test("changes keeps one checkpoint per resource and selection", () => {
  const cms = { group: "", resource: "configmaps" };
  assert.equal(checkpointKey(cms, { namespace: "app" }), "configmaps ns=app");
  assert.equal(checkpointKey(cms, {}), "configmaps all");
  assert.equal(
    checkpointKey({ group: "apps", resource: "deployments" }, {
      labelSelector: "a=b",
      fieldSelector: "metadata.name=x",
    }),
    "deployments.apps all l=a=b f=metadata.name=x",
  );
});

test("changes without --state, or with a bad --budget, is a usage error (exit 2)", async () => {
  let env = fakeEnv(["cm", "--server", "http://127.0.0.1:1"]);
  assert.equal(await runChanges(env), 2);
  assert.equal(
    env.err,
    "kube-reflector: missing --state DIR (where the checkpoint is kept)\n" +
      "Run 'kube-reflector changes --help' for usage.\n",
  );
  env = fakeEnv(["cm", "--state", "x", "--budget", "soon", "--server", "http://127.0.0.1:1"]);
  assert.equal(await runChanges(env), 2);
  assert.match(env.err, /--budget: not a duration: "soon"/);
});

test("changes that cannot reach the server exits 1 with a clear message and saves nothing", async () => {
  const server = await FakeApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), "cli-changes-"));
  try {
    // discovery works, then every list is refused
    server.inject({
      resource: "configmaps",
      verb: "list",
      times: Infinity,
      fault: { kind: "status", code: 403 },
    });
    const env = fakeEnv(["cm", "--state", dir, "--budget", "2s", "--server", server.url]);
    assert.equal(await runChanges(env), 1);
    assert.equal(env.out, "");
    assert.match(env.err, /^kube-reflector: catching up on configmaps failed: .*403/m);
    assert.ok(!/\n\s+at /.test(env.err), "no stack trace");
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
});

/** Every file of `dir` and its bytes, read at once (inside a synchronous stdout too). */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) files[name] = readFileSync(join(dir, name), "latin1");
  return files;
}

test("changes whose output cannot be written exits 1 and leaves the checkpoint: the next run prints those changes again", async () => {
  const server = await FakeApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), "cli-changes-"));
  try {
    const args = ["cm", "-n", "app", "--state", dir, "--server", server.url];
    const closed = (env: ReturnType<typeof fakeEnv>) => {
      env.stdout = () => {
        throw new Error("Broken pipe (os error 32)"); // the reader went away
      };
      return env;
    };
    server.create(cm("a"));
    // the first run cannot print: no checkpoint is made
    let env = closed(fakeEnv(args));
    assert.equal(await runChanges(env), 1);
    assert.match(
      env.err,
      /^kube-reflector: stdout closed before every change was written; the checkpoint was not advanced \(Broken pipe \(os error 32\)\)$/m,
    );
    assert.deepEqual(readdirSync(dir), []);
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["ADDED app/a"]);
    assert.match(env.err, /first run/);

    server.create(cm("b"));
    const before = filesOf(dir);
    env = closed(fakeEnv(args));
    assert.equal(await runChanges(env), 1);
    assert.deepEqual(filesOf(dir), before, "the checkpoint did not move");
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["ADDED app/b"], "the undelivered change, printed again");
    assert.equal(env.err, "");
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.equal(env.out, "", "delivered: not again");
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
});

test("changes saves the checkpoint only after the changes are written (through writeStdout where the env has it)", async () => {
  const server = await FakeApiServer.start();
  const dir = await mkdtemp(join(tmpdir(), "cli-changes-"));
  try {
    const args = ["cm", "-n", "app", "--state", dir, "--server", server.url];
    server.create(cm("a"));
    assert.equal(await runChanges(fakeEnv(args)), 0);
    server.create(cm("b"));
    const before = filesOf(dir);
    const seen: Array<Record<string, string>> = [];
    let env = fakeEnv(args);
    let written = "";
    env.writeStdout = (text) => {
      seen.push(filesOf(dir)); // what a reader dying now would leave
      written += text;
      return Promise.resolve();
    };
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(written), ["ADDED app/b"]);
    assert.equal(env.out, "", "stdout() is not used beside writeStdout");
    assert.deepEqual(seen, [before], "while writing, the checkpoint was the previous one");
    assert.notDeepEqual(filesOf(dir), before, "then it advanced");

    server.create(cm("c"));
    env = fakeEnv(args);
    env.writeStdout = () => Promise.reject(new Error("No space left on device"));
    assert.equal(await runChanges(env), 1);
    assert.match(env.err, /the checkpoint was not advanced \(No space left on device\)/);
    env = fakeEnv(args);
    assert.equal(await runChanges(env), 0, env.err);
    assert.deepEqual(parse(env.out), ["ADDED app/c"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await server.close();
  }
});
