import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime, test } from "../_test.ts";
import type { KubeObject } from "../../mod.ts";
import { FakeApiServer } from "../../testkit.ts";
import { MirrorControllerProcess } from "./_mirror_controller_process.ts";

const OF = "mirror.kube-reflector.dev/of";
type ConfigMap = KubeObject & { data?: Record<string, string> };

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
  server.get({ apiVersion: "v1", kind: "ConfigMap", namespace, name }) as ConfigMap | undefined;

/** A mirror whose Deployment does not exist (an orphan), as a hand or a crash leaves one. */
const orphan = (namespace: string, of: string): ConfigMap => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: `${of}-mirror`, namespace, labels: { [OF]: of } },
  data: { replicas: "1" },
});

/**
 * With `--workers 1` keys are reconciled in the order they were queued: an
 * orphan created now is deleted after every key queued before it was handled.
 */
async function barrier(server: FakeApiServer, proc: MirrorControllerProcess, namespace: string) {
  const of = `barrier-${crypto.randomUUID().slice(0, 8)}`;
  server.create(orphan(namespace, of));
  await proc.waitForLine(new RegExp(`^deleted ${namespace}/${of}-mirror `));
}

test("the mirror controller example mirrors labelled Deployments of its namespaces, follows an update without writing its own change again, deletes an orphan mirror found at start, and exits 0 on SIGTERM", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  let proc: MirrorControllerProcess | undefined;
  try {
    const web = server.create(deployment("team-a", "web", { replicas: 2, generation: 3 }));
    server.create(deployment("team-a", "plain", { labels: { mirror: "false" } }));
    server.create(deployment("team-c", "elsewhere")); // a namespace it does not watch
    server.create(orphan("team-b", "gone")); // its Deployment was deleted while no controller ran
    // A ConfigMap without the label: not the controller's, left alone.
    server.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "plain-mirror", namespace: "team-a" },
    });

    proc = new MirrorControllerProcess([
      `--server=${server.url}`,
      "--namespaces=team-a,team-b",
      "--workers",
      "1",
    ]);
    await proc.waitForLine(/^applied team-a\/web-mirror /);
    await proc.waitForLine(/^deleted team-b\/gone-mirror /);
    assert.match(proc.lines[0], /in team-a, team-b$/);
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
    // Its own write comes back through the mirror informer: handled before the barrier, no write.
    await barrier(server, proc, "team-a");
    assert.equal(proc.matching(/^applied/).length, 2, proc.output);

    const exit = await proc.stop("SIGTERM");
    assert.deepEqual(exit, { code: 0, signal: null }, proc.output);
    assert.equal(proc.lines.at(-1), "mirror-controller: stopped");
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
  }
});

test("the mirror controller example writes nothing for a mirror up to date at start or with a key added by hand, puts back a value or label edited by hand, re-creates a mirror deleted by hand, and says `already gone` when a delete finds none", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  let proc: MirrorControllerProcess | undefined;
  try {
    const web = server.create(deployment("team-a", "web", { replicas: 2, generation: 3 }));
    const want = { replicas: "2", images: "nginx:1.27", generation: "3" };
    server.create({ // up to date, as a previous run left it
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "web-mirror",
        namespace: "team-a",
        labels: { [OF]: "web" },
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: web.metadata.uid },
        ],
      },
      data: want,
    });
    proc = new MirrorControllerProcess(["--server", server.url, "--workers=1"]);
    await proc.waitForLine(/^synced: 1 Deployment\(s\) to mirror, 1 mirror\(s\)/);
    await barrier(server, proc, "team-a");
    assert.deepEqual(proc.matching(/^applied/), [], "no write at start");

    // A key added by hand (server-side apply leaves another manager's fields alone).
    const edit = (change: (cm: ConfigMap) => void) => {
      const cm = mirror(server, "team-a", "web-mirror")!;
      change(cm);
      server.update(cm);
    };
    edit((cm) => (cm.data = { ...cm.data, note: "added by hand" }));
    await barrier(server, proc, "team-a");
    assert.deepEqual(proc.matching(/^applied/), [], "no write for a key added by hand");

    edit((cm) => (cm.data!.replicas = "99"));
    await proc.waitForLine(/^applied team-a\/web-mirror replicas=2 /);
    assert.deepEqual(mirror(server, "team-a", "web-mirror")?.data, {
      ...want,
      note: "added by hand",
    });

    edit((cm) => (cm.metadata.labels = { [OF]: "api" }));
    await server.waitFor(() =>
      mirror(server, "team-a", "web-mirror")?.metadata.labels?.[OF] === "web"
    );

    server.delete({ apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "web-mirror" });
    await server.waitFor(() => mirror(server, "team-a", "web-mirror") !== undefined);
    assert.deepEqual(mirror(server, "team-a", "web-mirror")?.data, want);

    // Then quiet: once everything queued is handled, no write follows (a write that its own
    // echo undoes, such as a comparison of all keys with one added by hand, would loop).
    await barrier(server, proc, "team-a");
    const applied = proc.matching(/^applied/).length;
    await barrier(server, proc, "team-a");
    assert.equal(proc.matching(/^applied/).length, applied, proc.output);

    // The Deployment is deleted, and its mirror's delete finds it gone (404).
    server.inject({ verb: "delete", resource: "configmaps", fault: { kind: "status", code: 404 } });
    server.delete({ apiVersion: "apps/v1", kind: "Deployment", namespace: "team-a", name: "web" });
    await proc.waitForLine(/^already gone team-a\/web-mirror$/);
    assert.deepEqual(proc.matching(/^deleted team-a\/web-mirror/), [], proc.output);

    assert.deepEqual(await proc.stop("SIGTERM"), { code: 0, signal: null }, proc.output);
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
  }
});

test("the mirror controller example watches every namespace when none is given, and exits 2 on an invalid option, an unknown flag, a flag without a value or an argument that is not a flag", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  let proc: MirrorControllerProcess | undefined;
  try {
    server.create(deployment("ns-1", "one"));
    server.create(deployment("ns-2", "two", { replicas: 3 }));
    proc = new MirrorControllerProcess(["--server", server.url]);
    await proc.waitForLine(/^applied ns-1\/one-mirror replicas=1 /);
    await proc.waitForLine(/^applied ns-2\/two-mirror replicas=3 /);
    assert.match(proc.lines[0], /in all namespaces$/);
    server.delete({ apiVersion: "apps/v1", kind: "Deployment", namespace: "ns-2", name: "two" });
    await proc.waitForLine(/^deleted ns-2\/two-mirror /);
    assert.equal(mirror(server, "ns-2", "two-mirror"), undefined);
    assert.deepEqual(await proc.stop("SIGINT"), { code: 0, signal: null }, proc.output);

    const invalid: Array<[string[], RegExp]> = [
      [["--server", server.url, "--workers", "0"], /--workers must be an integer >= 1/],
      [["--server", server.url, "--namespace", "team-a"], /unknown flag --namespace\n/],
      [["--server", server.url, "--namespaces=team-a", "--token=s3cr3t"], /unknown flag --token\n/],
      [["--server", server.url, "--namespaces"], /--namespaces needs a value/],
      [["--namespaces=", "--server", server.url], /--namespaces needs a value/],
      [["--server", "--namespaces", "team-a"], /--server needs a value/],
      [["--server", server.url, "team-a"], /unexpected argument 3 /],
      [["--server", server.url, "--namespaces", " , "], /names no namespace/],
      [["--server", server.url, "--kubeconfig", "/dev/null"], /--server excludes --kubeconfig/],
    ];
    for (const [args, message] of invalid) {
      const p = new MirrorControllerProcess(args);
      assert.deepEqual(await p.exited, { code: 2, signal: null }, `${args.join(" ")}: ${p.output}`);
      assert.match(p.output, message);
      assert.doesNotMatch(p.output, /s3cr3t/);
    }
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
  }
});

test("the mirror controller example stops on a signal that comes while its configuration loads (exit 0 once loaded, nothing started), and ends at once on a second signal", async () => {
  const dir = await mkdtemp(join(tmpdir(), "mirror-controller-"));
  const server = await FakeApiServer.start();
  let proc: MirrorControllerProcess | undefined;
  try {
    server.create(deployment("team-a", "web"));
    const fifo = join(dir, "kubeconfig");
    execFileSync("mkfifo", [fifo]); // reading it blocks until a writer comes: loading hangs

    proc = new MirrorControllerProcess(["--kubeconfig", fifo]);
    await proc.waitForLine(/^mirror-controller: Deployments labelled/);
    proc.kill("SIGTERM");
    await proc.waitForLine(/^mirror-controller: stopping/);
    await writeFile(
      fifo,
      `{"clusters": [{"name": "c", "cluster": {"server": "${server.url}"}}], "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}], "current-context": "x"}`,
    );
    assert.deepEqual(await proc.exited, { code: 0, signal: null }, proc.output);
    assert.equal(proc.lines.at(-1), "mirror-controller: stopped");
    assert.deepEqual(proc.matching(/^(applied|synced)/), [], proc.output);

    proc = new MirrorControllerProcess(["--kubeconfig", fifo]);
    await proc.waitForLine(/^mirror-controller: Deployments labelled/);
    proc.kill("SIGTERM");
    await proc.waitForLine(/^mirror-controller: stopping/);
    // Deno exits 130; Node re-raises the signal (its exit would wait for the stuck read).
    const exit = runtime === "deno"
      ? { code: 130, signal: null }
      : { code: null, signal: "SIGINT" };
    assert.deepEqual(await proc.stop("SIGINT"), exit, proc.output);
  } finally {
    await proc?.stop("SIGKILL");
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

if (runtime === "deno") {
  test("the mirror controller example runs on Deno with --allow-env narrowed to the variables it reads, and exits 2 naming the flag when one is missing", async () => {
    const server = await FakeApiServer.start({ streamingList: true });
    let proc: MirrorControllerProcess | undefined;
    try {
      server.create(deployment("ns-1", "one"));
      server.create(deployment("ns-2", "two"));
      proc = new MirrorControllerProcess(["--server", server.url], {
        denoPermissions: ["--allow-net", "--allow-read", "--allow-env=MIRROR_NAMESPACES"],
        env: { MIRROR_NAMESPACES: "ns-2" },
      });
      await proc.waitForLine(/^applied ns-2\/two-mirror /);
      assert.match(proc.lines[0], /in ns-2$/);
      assert.deepEqual(await proc.stop("SIGTERM"), { code: 0, signal: null }, proc.output);

      const denied = new MirrorControllerProcess(["--server", server.url], {
        denoPermissions: ["--allow-net", "--allow-read", "--allow-env=HOME"],
      });
      assert.deepEqual(await denied.exited, { code: 2, signal: null }, denied.output);
      assert.match(denied.output, /MIRROR_NAMESPACES: run Deno with --allow-env=MIRROR_NAMESPACES/);
    } finally {
      await proc?.stop("SIGKILL");
      await server.close();
    }
  });
}
