/**
 * The command-line program against a real kube-apiserver (run in-process
 * with a fake CliEnv; tests/cli/program_test.ts spawns the real program):
 * `changes` run repeatedly prints exactly the changes made between runs;
 * `get` and `watch` with `-o table`/`wide` show the server's columns.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeList, KubeObject } from "../../mod.ts";
import { runChanges } from "../../src/cli/changes.ts";
import { runGet } from "../../src/cli/get.ts";
import { runWatch } from "../../src/cli/watch.ts";
import { fakeEnv, until } from "../cli/_fake_env.ts";
import { e2eTest } from "./_cluster.ts";
import { churnConfigMaps, configMap } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-cli";

interface Printed {
  type: string;
  object: KubeObject;
}

const printed = (out: string): Printed[] =>
  out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
const summary = (p: Printed[]) => p.map((c) => `${c.type} ${c.object.metadata.name}`);

e2eTest(
  "changes run repeatedly prints exactly the changes made between runs (the first: every object as ADDED)",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, defer }) => {
      const dir = await mkdtemp(join(tmpdir(), "e2e-cli-"));
      defer(() => rm(dir, { recursive: true, force: true }));
      await namespaces(ns, "e2e-cli-other");
      const base = `/api/v1/namespaces/${ns}/configmaps`;
      const post = (name: string, data: Record<string, string> = {}) =>
        admin.requestJson<KubeObject>(base, { method: "POST", body: configMap(name, ns, data) });
      for (const name of ["a", "b", "c"]) await post(name);
      await admin.requestJson("/api/v1/namespaces/e2e-cli-other/configmaps", {
        method: "POST",
        body: configMap("elsewhere", "e2e-cli-other", {}),
      });
      const args = [
        "configmaps",
        "-n",
        ns,
        "--state",
        dir,
        "--kubeconfig",
        cluster.kubeconfigs.token,
      ];
      const changes = async () => {
        const env = fakeEnv(args);
        const code = await runChanges(env);
        assert.equal(code, 0, env.err);
        return { changes: printed(env.out), err: env.err };
      };

      // (no kube-controller-manager runs: no kube-root-ca.crt ConfigMap in the namespace)
      const first = await changes();
      assert.deepEqual(summary(first.changes), ["ADDED a", "ADDED b", "ADDED c"]);
      assert.match(first.err, /first run/);

      const b = await admin.requestJson<KubeObject>(`${base}/b`);
      await admin.requestJson(`${base}/b`, {
        method: "PUT",
        body: { ...b, data: { k: "v" } },
      });
      await admin.requestJson(`${base}/a`, { method: "DELETE" });
      await post("d", { x: "1" });
      const second = await changes();
      assert.deepEqual(summary(second.changes), ["MODIFIED b", "DELETED a", "ADDED d"]);
      assert.deepEqual((second.changes[0].object as { data?: unknown }).data, { k: "v" });
      assert.equal(second.changes[2].object.kind, "ConfigMap");
      assert.equal(second.err, "", "no list: the checkpoint's version was in the window");

      const third = await changes();
      assert.deepEqual(third.changes, [], "nothing changed: nothing printed");

      // random churn: the changes printed, applied to what the runs printed before, give the server's state
      const model = new Map<string, string>();
      for (const run of [first, second, third]) {
        for (const c of run.changes) {
          if (c.type === "DELETED") model.delete(c.object.metadata.name!);
          else model.set(c.object.metadata.name!, c.object.metadata.resourceVersion!);
        }
      }
      const churn = await churnConfigMaps(admin, ns, { ops: 40, seed: 29, prefix: "churn" });
      const fourth = await changes();
      assert.equal(fourth.err, "", "no list: every change came from the watch");
      assert.equal(fourth.changes.length, churn.created + churn.updated + churn.deleted);
      for (const c of fourth.changes) {
        if (c.type === "DELETED") model.delete(c.object.metadata.name!);
        else model.set(c.object.metadata.name!, c.object.metadata.resourceVersion!);
      }
      const fresh = await admin.requestJson<KubeList>(base);
      assert.deepEqual(
        model,
        new Map(fresh.items.map((o) => [o.metadata.name!, o.metadata.resourceVersion!])),
      );
    }),
  { only: "current" },
);

e2eTest(
  "get and watch with -o table and wide print the server's columns",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces }) => {
      await namespaces(ns);
      await admin.requestJson(`/api/v1/namespaces/${ns}/configmaps`, {
        method: "POST",
        body: configMap("two-keys", ns, { a: "1", b: "2" }),
      });
      await admin.requestJson(`/apis/apps/v1/namespaces/${ns}/deployments`, {
        method: "POST",
        body: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web", namespace: ns },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: { containers: [{ name: "nginx", image: "nginx:1.27" }] },
            },
          },
        },
      });
      const conn = ["--kubeconfig", cluster.kubeconfigs.token];

      let env = fakeEnv(["cm", "two-keys", "-n", ns, ...conn]);
      assert.equal(await runGet(env), 0, env.err);
      assert.match(env.out, /^NAME       DATA   AGE\ntwo-keys   2      \d+s\n$/);

      env = fakeEnv(["deploy", "-n", ns, ...conn]);
      assert.equal(await runGet(env), 0, env.err);
      assert.match(
        env.out,
        /^NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    0\/2     0            0           \d+s\n$/,
      );

      env = fakeEnv(["deployments.apps", "-A", "-o", "wide", ...conn]);
      assert.equal(await runGet(env), 0, env.err);
      const [header, row] = env.out.split("\n");
      assert.match(
        header,
        /^NAMESPACE +NAME +READY +UP-TO-DATE +AVAILABLE +AGE +CONTAINERS +IMAGES +SELECTOR$/,
      );
      assert.match(row, new RegExp(`^${ns} +web +0/2 .* nginx +nginx:1\\.27 +app=web$`));

      env = fakeEnv(["namespaces", ...conn]);
      assert.equal(await runGet(env), 0, env.err);
      assert.match(env.out, /^NAME +STATUS +AGE\n/);
      assert.match(env.out, new RegExp(`\\n${ns} +Active +\\d+s\\n`));

      // watch: the first rows, then a change's row in the server's columns
      env = fakeEnv(["cm", "-n", ns, "-l", "watched=yes", ...conn]);
      const done = runWatch(env);
      await admin.requestJson(`/api/v1/namespaces/${ns}/configmaps`, {
        method: "POST",
        body: {
          ...configMap("w", ns, { a: "1", b: "2", c: "3" }),
          metadata: { name: "w", namespace: ns, labels: { watched: "yes" } },
        },
      });
      await until(() => env.out.split("\n").length === 3, "the added row", 30_000);
      env.interrupt();
      assert.equal(await done, 0, env.err);
      assert.match(env.out, /^EVENT      NAME   DATA   AGE\nADDED      w      3      \d+s\n$/);
    }),
  { only: "current" },
);
