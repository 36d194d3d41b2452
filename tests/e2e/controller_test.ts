/**
 * The mirror controller example (examples/mirror_controller.ts) against the
 * real API server: Deployments labelled mirror=true in two namespaces get
 * mirror ConfigMaps that follow them; it converges after a kill -9 with
 * changes made while it was down (writing nothing for a mirror still up to
 * date), and across one API server restart (after which both its Deployment
 * and its mirror informers must deliver again).
 */
import assert from "node:assert/strict";
import { type KubeClient, type KubeObject, resourceClient } from "../../mod.ts";
import { MirrorControllerProcess } from "../examples/_mirror_controller_process.ts";
import { e2eTest, eventually } from "./_cluster.ts";
import { withCluster } from "./_with_cluster.ts";

const OF = "mirror.kube-reflector.dev/of";
const A = "mirror-a";
const B = "mirror-b";
const OTHER = "mirror-other"; // labelled Deployments here are not the controller's

interface Deployment extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { name: string; image: string }[] };
    };
  };
}
type ConfigMap = KubeObject & { data?: Record<string, string> };

function deployment(
  name: string,
  { mirror = true, replicas = 1, image = "nginx:1.27" } = {},
): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, labels: mirror ? { mirror: "true" } : {} },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "main", image }] },
      },
    },
  };
}

/** `data` with its keys sorted (the server sorts them), for comparing as JSON. */
const sorted = (data: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(data).sort(([a], [b]) => a < b ? -1 : 1));

/** What the mirrors of namespaces A and B should be, from the server's Deployments: "ns/name" → summary. */
async function expectedMirrors(admin: KubeClient): Promise<Map<string, string>> {
  const deployments = resourceClient<Deployment>(admin, {
    apiVersion: "apps/v1",
    resource: "deployments",
  });
  const want = new Map<string, string>();
  for (const namespace of [A, B]) {
    const list = await deployments.list({ labelSelector: "mirror=true" }).then((l) =>
      l.items.filter((d) => d.metadata.namespace === namespace)
    );
    for (const d of list) {
      want.set(
        `${namespace}/${d.metadata.name}-mirror`,
        JSON.stringify({
          of: d.metadata.name,
          owner: d.metadata.uid,
          data: sorted({
            replicas: String(d.spec.replicas),
            images: d.spec.template.spec.containers.map((c) => c.image).join(","),
            generation: String(d.metadata.generation),
          }),
        }),
      );
    }
  }
  return want;
}

/** The mirrors on the server (ConfigMaps with the mirror label), in every namespace. */
async function actualMirrors(admin: KubeClient): Promise<Map<string, string>> {
  const configMaps = resourceClient<ConfigMap>(admin, { apiVersion: "v1", resource: "configmaps" });
  const list = await configMaps.list({ labelSelector: OF });
  return new Map(list.items.map((cm) => {
    const owners = (cm.metadata.ownerReferences ?? []) as { uid?: string }[];
    const summary = {
      of: cm.metadata.labels?.[OF],
      owner: owners.map((o) => o.uid).join(","),
      data: sorted(cm.data),
    };
    return [`${cm.metadata.namespace}/${cm.metadata.name}`, JSON.stringify(summary)];
  }));
}

/** Waits until the mirrors on the server are exactly those the Deployments call for. */
async function converged(admin: KubeClient, what: string, timeoutMs = 30_000): Promise<void> {
  let last = "";
  await eventually(
    async () => {
      const [want, have] = await Promise.all([expectedMirrors(admin), actualMirrors(admin)]);
      last = `want ${JSON.stringify([...want])}\nhave ${JSON.stringify([...have])}`;
      return want.size === have.size && [...want].every(([k, v]) => have.get(k) === v);
    },
    what,
    timeoutMs,
  ).catch((err) => {
    throw new Error(`${err.message}\n${last}`);
  });
}

e2eTest(
  "the mirror controller example mirrors labelled Deployments of two namespaces, follows updates, label removals and deletes, and converges after a kill -9 and across an API server restart",
  (release) =>
    withCluster(release, async ({ cluster, admin, namespaces, defer }) => {
      const started = Date.now();
      let proc: MirrorControllerProcess | undefined;
      defer(() => proc?.stop("SIGKILL"));
      const args = ["--kubeconfig", cluster.kubeconfigs.token, "--namespaces", `${A},${B}`];
      try {
        await namespaces(A, B, OTHER);
        const deployments = resourceClient<Deployment>(admin, {
          apiVersion: "apps/v1",
          resource: "deployments",
        });
        const configMaps = resourceClient<ConfigMap>(admin, {
          apiVersion: "v1",
          resource: "configmaps",
        });
        const create = (ns: string, d: Deployment) => deployments.create(d, { namespace: ns });
        const mirrorsNow = async () => [...(await actualMirrors(admin)).keys()].sort();
        await create(A, deployment("web", { replicas: 2 }));
        await create(A, deployment("plain", { mirror: false }));
        await create(B, deployment("api"));
        await create(B, deployment("worker"));
        await create(B, deployment("batch"));
        await create(B, deployment("steady")); // never changes: its mirror is never written again
        await create(OTHER, deployment("elsewhere"));

        proc = new MirrorControllerProcess(args);
        await proc.waitForLine(/^synced: /, 30_000);
        await converged(admin, "the first mirrors");
        assert.deepEqual(await mirrorsNow(), [
          `${A}/web-mirror`,
          `${B}/api-mirror`,
          `${B}/batch-mirror`,
          `${B}/steady-mirror`,
          `${B}/worker-mirror`,
        ]);

        // An update (a new generation), a label removed, a delete.
        await deployments.patch("web", { spec: { replicas: 4 } }, { namespace: A });
        await deployments.patch("worker", { metadata: { labels: { mirror: null } } }, {
          namespace: B,
        });
        await deployments.delete("api", { namespace: B });
        await converged(admin, "mirrors after an update, a label removal and a delete");
        assert.deepEqual(await mirrorsNow(), [
          `${A}/web-mirror`,
          `${B}/batch-mirror`,
          `${B}/steady-mirror`,
        ]);
        const web = await configMaps.get("web-mirror", { namespace: A });
        assert.deepEqual(web.data, { replicas: "4", images: "nginx:1.27", generation: "2" });

        // kill -9, and changes while it is down: a create, an update, a relabel, a delete.
        const killed = await proc.stop("SIGKILL");
        assert.equal(killed.signal, "SIGKILL");
        await create(A, deployment("cache", { image: "redis:7" }));
        await deployments.patch("web", { spec: { replicas: 1 } }, { namespace: A });
        await deployments.patch("worker", { metadata: { labels: { mirror: "true" } } }, {
          namespace: B,
        });
        await deployments.delete("batch", { namespace: B });
        // One worker: keys are reconciled in the order queued, all of the initial lists' first.
        proc = new MirrorControllerProcess([...args, "--workers=1"]);
        await converged(admin, "mirrors after a restart of the controller");
        assert.deepEqual(await mirrorsNow(), [
          `${A}/cache-mirror`,
          `${A}/web-mirror`,
          `${B}/steady-mirror`,
          `${B}/worker-mirror`,
        ]);
        await proc.waitForLine(
          /^deleted mirror-b\/batch-mirror \(Deployment gone or not labelled\)$/,
        );
        // Barrier: an orphan created now is deleted after every key of the initial lists.
        await configMaps.create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "stray-mirror", labels: { [OF]: "stray" } },
        }, { namespace: A });
        await proc.waitForLine(/^deleted mirror-a\/stray-mirror /);
        assert.deepEqual(proc.matching(/steady-mirror/), [], "no write for a mirror up to date");

        // The API server restarts (once) under the running controller; changes made after reach
        // both kinds of informer: an update, a create and a delete of Deployments, and a mirror
        // deleted by hand (only the mirror informer sees that: it must be created again).
        await cluster.restartApiserver();
        await deployments.patch(
          "cache",
          { spec: { template: { spec: { containers: [{ name: "main", image: "redis:8" }] } } } },
          { namespace: A, type: "strategic" },
        );
        await create(B, deployment("late"));
        await deployments.delete("web", { namespace: A });
        const worker = await configMaps.get("worker-mirror", { namespace: B });
        await configMaps.delete("worker-mirror", { namespace: B });
        await converged(admin, "mirrors after an API server restart", 45_000);
        assert.deepEqual(await mirrorsNow(), [
          `${A}/cache-mirror`,
          `${B}/late-mirror`,
          `${B}/steady-mirror`,
          `${B}/worker-mirror`,
        ]);
        const recreated = await configMaps.get("worker-mirror", { namespace: B });
        assert.notEqual(recreated.metadata.uid, worker.metadata.uid, "worker-mirror created again");
        // A mirror created after the restart is known only to the recovered mirror informer:
        // deleting its Deployment deletes it.
        await deployments.delete("late", { namespace: B });
        await converged(admin, "mirrors after a delete that follows the API server restart");
        assert.deepEqual(await mirrorsNow(), [
          `${A}/cache-mirror`,
          `${B}/steady-mirror`,
          `${B}/worker-mirror`,
        ]);
        assert.equal(proc.child.exitCode, null, "the controller ran on through the restart");

        const stopped = await proc.stop("SIGTERM");
        assert.deepEqual(stopped, { code: 0, signal: null }, proc.output);
        console.log(`e2e: mirror controller test took ${Date.now() - started} ms`);
      } catch (err) {
        throw new Error(
          `${err instanceof Error ? err.message : err}\ncontroller output:\n${proc?.output}`,
          { cause: err },
        );
      }
    }),
);
