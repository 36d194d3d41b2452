/**
 * catchUp against the real API server, through the serverless example:
 * the second run lists nothing and gets exactly the changes made since.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeList } from "../../mod.ts";
import { runExample } from "../examples/_run_example.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { churnConfigMaps } from "./_reflect.ts";
import { withCluster } from "./_with_cluster.ts";

const ns = "e2e-catchup";

e2eTest(
  "the serverless example lists on its first run; run again after changes, it lists nothing, gets every change, and ends equal to a fresh list",
  (release) =>
    withCluster(release, {
      // kube-apiserver 1.20 writes its own lease into etcd every 10 s (the endpoint
      // reconciler); that moves the target past our last change and 1.20 sends no bookmark
      // to prove it, so a run would list ("no-proof") whenever that write came between our
      // change and the run: about one run in six. Without that writer the cluster is quiet.
      // (1.37 writes leases too, and proves the target with a bookmark.)
      apiserverArgs: release.current ? [] : ["--endpoint-reconciler-type=none"],
    }, async ({ cluster, admin, namespaces, defer }) => {
      const dir = await mkdtemp(join(tmpdir(), "e2e-catchup-"));
      defer(() => rm(dir, { recursive: true, force: true }));
      await namespaces(ns);
      await churnConfigMaps(admin, ns, { ops: 30, seed: 11 });
      const args = [
        "--kubeconfig",
        cluster.kubeconfigs.token,
        "--namespace",
        ns,
        "--checkpoint-dir",
        dir,
      ];
      const first = await runExample(args);
      assert.equal(first.code, 0, JSON.stringify(first.summary));
      assert.equal(first.summary.listed, "no-checkpoint");
      assert.equal(first.summary.written, "base");

      const churn = await churnConfigMaps(admin, ns, { ops: 15, seed: 12, prefix: "later" });
      const second = await runExample(args);
      assert.equal(second.code, 0, JSON.stringify(second.summary));
      assert.equal(second.summary.complete, true);
      assert.equal(
        second.summary.listed,
        null,
        "no list: the checkpoint's version is in the window",
      );
      const requests = second.summary.requests as string[];
      assert.equal(requests.filter((r) => r === "list").length, 0, `requests: ${requests}`);
      assert.equal(requests.filter((r) => r === "list(limit=1)").length, 1);
      assert.ok(second.lines.length >= churn.created, `${second.lines.length} changes`);

      const fresh = await admin.requestJson<KubeList>(`/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(second.summary.objects, fresh.items.length, "the same objects as a fresh list");

      // nothing changed since: a third run is proven complete without a list, and writes
      // nothing, or only the head (a few hundred bytes) to move the version on
      const third = await runExample(args);
      assert.equal(third.code, 0, JSON.stringify(third.summary));
      assert.equal(third.lines.length, 0);
      assert.equal(third.summary.listed, null);
      assert.ok(
        ["none", "version"].includes(third.summary.written as string),
        JSON.stringify(third.summary),
      );
      assert.ok((third.summary.bytesWritten as number) < 1_000, JSON.stringify(third.summary));

      // One change of ours, then the cluster keeps writing elsewhere: the target is past our
      // last change, so only a bookmark proves it. 1.37's watch cache sends one before the
      // watch's timeout; 1.20 sends none, and catchUp lists once instead.
      await namespaces(`${ns}-busy`);
      await churnConfigMaps(admin, ns, { ops: 1, seed: 13, prefix: "one" });
      let writing = true;
      let written = 0;
      const writer = (async () => {
        for (let i = 0; writing; i++) {
          await admin.requestJson(`/api/v1/namespaces/${ns}-busy/secrets`, {
            method: "POST",
            body: {
              apiVersion: "v1",
              kind: "Secret",
              metadata: { name: `s-${i}` },
              stringData: { i: String(i) },
            },
          });
          written++;
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      try {
        // The target must be past our change (on 1.20, were it not, the change's own event
        // would prove it): wait for writes after it, not for a time.
        await eventually(() => written >= 2, "writes after our change", 30_000);
        const busy = await runExample(args);
        assert.equal(busy.code, 0, JSON.stringify(busy.summary));
        assert.equal(busy.summary.complete, true);
        assert.equal(busy.lines.length, 1, busy.lines.join("\n"));
        assert.equal(
          busy.summary.listed,
          release.current ? null : "no-proof",
          JSON.stringify(busy.summary),
        );
      } finally {
        writing = false;
        await writer;
      }

      // After an API server restart its watch cache starts at the version of the restart: a
      // checkpoint older than that gets a 410 and one list; one at that version resumes.
      await cluster.restartApiserver();
      await churnConfigMaps(admin, ns, { ops: 3, seed: 14, prefix: "after" });
      const restarted = await runExample(args);
      assert.equal(restarted.code, 0, JSON.stringify(restarted.summary));
      assert.equal(restarted.summary.complete, true);
      assert.ok(
        [null, "expired"].includes(restarted.summary.listed as string | null),
        JSON.stringify(restarted.summary),
      );
      const lists = (restarted.summary.requests as string[]).filter((r) => r === "list").length;
      assert.equal(lists, restarted.summary.listed ? 1 : 0);
      const after = await admin.requestJson<KubeList>(`/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(restarted.summary.objects, after.items.length);
    }),
);
