import assert from "node:assert/strict";
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
