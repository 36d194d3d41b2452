import assert from "node:assert/strict";
import { test } from "../_test.ts";
import type { KubeObject } from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { MirrorControllerProcess } from "./_mirror_controller_process.ts";

const OF = "mirror.kube-reflector.dev/of";

function deployment(
  namespace: string,
  name: string,
  { labels = { mirror: "true" }, replicas = 1, image = "nginx:1.27", generation = 1 } = {},
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, labels, generation },
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

const mirror = (server: FakeApiServer, namespace: string, name: string) =>
  server.get({ apiVersion: "v1", kind: "ConfigMap", namespace, name }) as
    | (KubeObject & { data?: Record<string, string> })
    | undefined;

test("the mirror controller example mirrors labelled Deployments of its namespaces, follows an update, deletes an orphan mirror found at start, and exits 0 on SIGTERM", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  let proc: MirrorControllerProcess | undefined;
  try {
    const web = server.create(deployment("team-a", "web", { replicas: 2, generation: 3 }));
    server.create(deployment("team-a", "plain", { labels: { mirror: "false" } }));
    server.create(deployment("team-c", "elsewhere")); // a namespace it does not watch
    // A mirror whose Deployment was deleted while no controller ran.
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "gone-mirror", namespace: "team-b", labels: { [OF]: "gone" } },
      data: { replicas: "1" },
    });
    // A ConfigMap without the label: not the controller's, left alone.
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "plain-mirror", namespace: "team-a" },
    });

    proc = new MirrorControllerProcess([
      "--server",
      server.url,
      "--namespaces",
      "team-a,team-b",
    ]);
    await proc.waitForLine(/^applied team-a\/web-mirror /);
    await proc.waitForLine(/^deleted team-b\/gone-mirror /);
    const cm = mirror(server, "team-a", "web-mirror");
    assert.deepEqual(cm?.data, { replicas: "2", images: "nginx:1.27", generation: "3" });
    assert.equal(cm?.metadata.labels?.[OF], "web");
    assert.deepEqual(cm?.metadata.ownerReferences, [
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        name: "web",
        uid: web.metadata.uid,
        controller: true,
      },
    ]);
    assert.equal(mirror(server, "team-b", "gone-mirror"), undefined);
    assert.ok(mirror(server, "team-a", "plain-mirror"), "an unlabelled ConfigMap is not touched");
    assert.equal(mirror(server, "team-c", "elsewhere-mirror"), undefined);

    server.update(
      deployment("team-a", "web", { replicas: 5, image: "nginx:1.28", generation: 4 }),
    );
    await proc.waitForLine(/^applied team-a\/web-mirror replicas=5 /);
    assert.deepEqual(mirror(server, "team-a", "web-mirror")?.data, {
      replicas: "5",
      images: "nginx:1.28",
      generation: "4",
    });
    // No write for a mirror already up to date (its own change comes back through the watch).
    assert.equal(proc.lines.filter((l) => l.startsWith("applied")).length, 2, proc.output);

    const exit = await proc.stop("SIGTERM");
    assert.deepEqual(exit, { code: 0, signal: null }, proc.output);
    assert.equal(proc.lines.at(-1), "mirror-controller: stopped");
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
  }
});

test("the mirror controller example watches every namespace when none is given, and exits 2 on an invalid option", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  let proc: MirrorControllerProcess | undefined;
  try {
    server.create(deployment("ns-1", "one"));
    server.create(deployment("ns-2", "two", { replicas: 3 }));
    proc = new MirrorControllerProcess(["--server", server.url]);
    await proc.waitForLine(/^applied ns-1\/one-mirror replicas=1 /);
    await proc.waitForLine(/^applied ns-2\/two-mirror replicas=3 /);
    assert.match(proc.lines[0], /in all namespaces/);
    server.delete({ apiVersion: "apps/v1", kind: "Deployment", namespace: "ns-2", name: "two" });
    await proc.waitForLine(/^deleted ns-2\/two-mirror /);
    assert.equal(mirror(server, "ns-2", "two-mirror"), undefined);
    assert.deepEqual(await proc.stop("SIGINT"), { code: 0, signal: null }, proc.output);

    const invalid = new MirrorControllerProcess(["--server", server.url, "--workers", "0"]);
    assert.deepEqual(await invalid.exited, { code: 2, signal: null });
    assert.match(invalid.output, /--workers must be an integer >= 1/);
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
  }
});
