import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "../_test.ts";
import { configMap } from "../_harness.ts";
import { FakeApiServer } from "../../testkit.ts";
import { runExample } from "./_run_example.ts";

test("the serverless example lists on its first run, and on its second run gets only the changes made in between, with no list but the limit=1 one", async () => {
  const server = await FakeApiServer.start({ maxWatchMs: 300 });
  const dir = await mkdtemp(join(tmpdir(), "serverless-example-"));
  try {
    for (let i = 0; i < 20; i++) server.create(configMap(`cm-${i}`));
    const args = ["--server", server.url, "--namespace", "fx", "--checkpoint-dir", dir];
    const first = await runExample(args);
    assert.equal(first.code, 0);
    assert.equal(first.summary.listed, "no-checkpoint");
    assert.equal(first.lines.length, 20);
    server.create(configMap("new"));
    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "fx", name: "cm-3" });
    const second = await runExample(args);
    assert.equal(second.code, 0);
    assert.deepEqual(second.lines.map((l) => l.split(" ").slice(0, 2).join(" ")), [
      "add fx/new",
      "delete fx/cm-3",
    ]);
    assert.equal(second.summary.listed, null);
    assert.equal(second.summary.complete, true);
    assert.deepEqual(second.summary.requests, ["list(limit=1)", "watch"]);
    assert.equal(second.summary.saved, 20);
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
