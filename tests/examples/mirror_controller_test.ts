import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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

test("the mirror controller example exits 2 on an invalid replica, health, finalizer or log flag: --leader-elect with --shards, a malformed duration, timings the library refuses, a lease flag without an election, a boolean flag with a value, a bad port", async () => {
  const server = await FakeApiServer.start();
  try {
    const s = ["--server", server.url];
    const invalid: Array<[string[], RegExp]> = [
      [[...s, "--leader-elect", "--shards"], /--leader-elect and --shards exclude each other/],
      [
        [...s, "--leader-elect", "--lease-duration", "15"],
        /--lease-duration must be a duration such as 15s or 500ms/,
      ],
      [[...s, "--shards", "--retry-period=0s"], /--retry-period must be a duration/],
      [
        [...s, "--shards", "--renew-deadline=2h"],
        /--renew-deadline must be a duration .*at most 1h/,
      ],
      [[...s, "--leader-elect", "--lease-duration=1s500"], /--lease-duration must be a duration/],
      [
        [...s, "--leader-elect", "--lease-duration=2s", "--renew-deadline=3s"],
        /leaseDurationMs must be greater than renewDeadlineMs/,
      ],
      [[...s, "--identity", "me"], /--identity needs --leader-elect or --shards/],
      [[...s, "--lease-namespace=ns"], /--lease-namespace needs --leader-elect or --shards/],
      [[...s, "--leader-elect=yes"], /--leader-elect takes no value \(or =true, =false\)/],
      [[...s, "--finalizer", "team-a"], /unexpected argument 4 /],
      [[...s, "--health-port", "http"], /--health-port must be a port number/],
      [[...s, "--health-port=65536"], /--health-port must be a port number/],
      [[...s, "--reconcile-log"], /--reconcile-log needs a value/],
      [[...s, "--shards", "--shards"], /--shards is given twice/],
    ];
    for (const [args, message] of invalid) {
      const p = new MirrorControllerProcess(args);
      assert.deepEqual(await p.exited, { code: 2, signal: null }, `${args.join(" ")}: ${p.output}`);
      assert.match(p.output, message, args.join(" "));
    }
  } finally {
    await server.close();
  }
});

test("two replicas of the mirror controller example with --leader-elect, --finalizer, --health-port and --reconcile-log: one leads and reconciles, its finalizer goes on and comes off (also when the label is removed), Events are recorded, health tells who leads, and after a SIGTERM the other leads", async () => {
  const server = await FakeApiServer.start({ streamingList: true });
  const dir = await mkdtemp(join(tmpdir(), "mirror-controller-"));
  const logPath = join(dir, "reconcile.log");
  const procs: MirrorControllerProcess[] = [];
  const FINALIZER = "mirror.kube-reflector.dev/cleanup";
  const get = (name: string) =>
    server.get({ apiVersion: "apps/v1", kind: "Deployment", namespace: "team-a", name });
  try {
    server.create(deployment("team-a", "web"));
    server.create(deployment("team-a", "api"));
    const args = (identity: string) => [
      ...["--server", server.url, "--namespaces", "team-a", "--workers", "1"],
      ...["--leader-elect", "--identity", identity, "--finalizer", "--health-port", "0"],
      ...["--lease-duration", "2s", "--renew-deadline=1500ms", "--retry-period", "200ms"],
      ...["--reconcile-log", logPath],
    ];
    const permissions = ["--allow-net", "--allow-env", "--allow-read", "--allow-write"];
    procs.push(new MirrorControllerProcess(args("one"), { denoPermissions: permissions }));
    await procs[0].waitForLine(/^leading$/);
    procs.push(new MirrorControllerProcess(args("two"), { denoPermissions: permissions }));
    await procs[1].waitForLine(/^standby \(leader: one\)$/);
    const [one, two] = procs;
    await one.waitForLine(/^applied team-a\/web-mirror /);
    await one.waitForLine(/^applied team-a\/api-mirror /);
    assert.deepEqual(get("web")?.metadata.finalizers, [FINALIZER]);
    assert.equal(two.matching(/^applied/).length, 0, "a standby reconciles nothing");

    // Health: the informers, and what this replica owns.
    for (const [proc, message] of [[one, "leading"], [two, "standby (leader: one)"]] as const) {
      const url = (await proc.waitForLine(/^health: /)).slice("health: ".length);
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/readyz$/);
      const res = await fetch(url, { headers: { accept: "application/json" } });
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      const names = body.checks.map((c: { name: string }) => c.name);
      assert.ok(names.length === 3 && names.includes("controller"), names.join());
      assert.equal(
        body.checks.find((c: { name: string }) => c.name === "controller").message,
        message,
      );
    }

    // A label removed: the finalizer comes off (read directly: the informer no longer has it).
    server.update({ ...get("api")!, metadata: { ...get("api")!.metadata, labels: {} } });
    await one.waitForLine(/^released team-a\/api \(finalizer removed: no longer labelled\)$/);
    await one.waitForLine(/^deleted team-a\/api-mirror /);
    assert.deepEqual(get("api")?.metadata.finalizers ?? [], []);
    // A delete: marked, its mirror deleted, then the finalizer removed: gone.
    server.delete({ apiVersion: "apps/v1", kind: "Deployment", namespace: "team-a", name: "web" });
    await one.waitForLine(/^deleted team-a\/web-mirror \(Deployment deleted\)$/);
    await server.waitFor(() => get("web") === undefined);
    assert.equal(mirror(server, "team-a", "web-mirror"), undefined);

    // Events on the Deployments (written in the background).
    await server.waitFor(() => {
      const reasons = server.objects({ resource: "events", group: "events.k8s.io" })
        .map((e) =>
          `${(e as { reason?: string }).reason} ${
            (e as { regarding?: { name?: string } }).regarding?.name
          }`
        );
      return ["MirrorApplied web", "MirrorApplied api", "MirrorDeleted web", "MirrorDeleted api"]
        .every((r) => reasons.includes(r));
    });

    // SIGTERM of the leader: it releases the Lease, the other leads and reconciles.
    assert.deepEqual(await one.stop("SIGTERM"), { code: 0, signal: null }, one.output);
    await two.waitForLine(/^leading$/);
    server.create(deployment("team-a", "late"));
    await two.waitForLine(/^applied team-a\/late-mirror /);
    assert.deepEqual(await two.stop("SIGTERM"), { code: 0, signal: null }, two.output);

    // The reconcile log: one line per append, a start and an end around each reconcile.
    const lines = (await readFile(logPath, "utf8")).trim().split("\n");
    const pids = new Set(lines.map((l) => l.split(" ")[1]));
    assert.equal(pids.size, 2, "both reconciled, one after the other");
    for (const line of lines) {
      assert.match(line, /^(start \d+ team-a\/\w+|end \d+ team-a\/\w+ (ok|error))$/);
    }
    assert.equal(
      lines.filter((l) => l.startsWith("start")).length,
      lines.filter((l) => l.startsWith("end")).length,
    );
  } finally {
    for (const p of procs) await p.stop("SIGKILL");
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
