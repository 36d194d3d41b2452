/**
 * A small controller: every Deployment labelled `mirror=true` gets a
 * ConfigMap `<name>-mirror` beside it that summarises it (replicas, images,
 * generation), kept current as the Deployment changes and deleted when the
 * Deployment is deleted or loses its label. It shows the whole pattern:
 * informers with label selectors → work queue → `reconcile(key)`, reads
 * from listers (the informers' caches, no request), writes by server-side
 * apply, and level-based cleanup that also removes mirrors left behind
 * while the controller was down.
 *
 *   deno run --allow-net --allow-env --allow-read examples/mirror_controller.ts \
 *     [--namespaces team-a,team-b] [--kubeconfig PATH] [--context NAME] [--server URL] [--workers 2] \
 *     [--leader-elect | --shards] [--lease-namespace NS] [--identity ID] \
 *     [--lease-duration 15s] [--renew-deadline 10s] [--retry-period 2s] \
 *     [--health-port 8080] [--finalizer] [--reconcile-log PATH]
 *   node npm/esm/examples/mirror_controller.js ...   (after `npm run build:npm`)
 *
 * Flags take their value as `--flag value` or `--flag=value`; the switches
 * (`--leader-elect`, `--shards`, `--finalizer`) take none, or `=true` /
 * `=false`. Any other argument (an unknown flag, a missing value) is an
 * error (exit 2), never ignored: a mistyped `--namespace` must not widen it
 * to every namespace.
 *
 * Several replicas (run the same command in each):
 * - `--leader-elect`: one replica, the leader, reconciles; the others sync
 *   their informers and stand by (the Controller's `leaderElection`, on the
 *   Lease `mirror-controller`). A leader that dies is replaced once its
 *   lease expires (`--lease-duration`); one stopped by a signal releases
 *   the Lease and is replaced at once.
 * - `--shards`: each replica reconciles its share of the Deployments (the
 *   Controller's `shards`, members of the group `mirror-controller`, each
 *   with its own Lease); a member that dies leaves its share to the others
 *   once its lease expires, one stopped by a signal at once.
 * - `--lease-namespace` (default: the first of `--namespaces`, else
 *   `default`), `--identity` (default: the hostname and random hex; unique
 *   per process), and the timings as kube-controller-manager's
 *   `--leader-elect-*` flags take them (`15s`, `500ms`, `1m30s`; defaults
 *   15s, 10s, 2s; the lease duration must exceed the renew deadline, which
 *   must exceed 1.2 retry periods).
 * It prints `identity: ...`, then a line on each change of what it owns:
 * `leading`, `standby (leader: ID)`, `owning a share: 1 of N members (...)`
 * or `owning nothing: N members (...)`.
 *
 * `--health-port N` serves `/livez`, `/readyz` and `/healthz` on 127.0.0.1
 * (port 0: any free one; it prints `health: http://127.0.0.1:N/readyz`):
 * the informers, and a check `controller` telling what this replica owns,
 * always ok (a standby is ready: it is warm). On Deno through `Deno.serve`,
 * on Node through `node:http` and `nodeRequestListener`.
 *
 * `--finalizer`: each mirrored Deployment carries the finalizer
 * `mirror.kube-reflector.dev/cleanup` (the library's `finalizer` helper: put
 * on before the first apply), so deleting it waits until its mirror is
 * deleted: a delete made while no replica runs is not lost. A Deployment
 * that loses its label leaves the informer: the replica reads it directly
 * and removes the finalizer (with its resourceVersion as a precondition),
 * or it could never be deleted. The gap: a replica that dies between
 * putting the finalizer on and the first apply, with the label removed
 * before another replica looks, leaves the finalizer (no mirror points
 * back to the Deployment); remove it by hand
 * (`kubectl patch deployment NAME --type=json -p '[{"op":"remove","path":"/metadata/finalizers/0"}]'`).
 *
 * Events: each write records a Normal Event on its Deployment
 * (`MirrorApplied`, `MirrorDeleted`; `kubectl describe deployment` shows
 * them), in the background: a reconcile never waits for one.
 *
 * `--reconcile-log PATH` is a test hook (tests/e2e/replicas_test.ts): it
 * appends `start <pid> <key>` before and `end <pid> <key> ok|error` after
 * each reconcile, one line per append (O_APPEND), so that the file gives a
 * global order of the reconciles of every replica. Deno needs
 * `--allow-write` for it (and `--allow-sys=hostname` for the default
 * identity to hold the hostname).
 *
 * Namespaces: `--namespaces` or the `MIRROR_NAMESPACES` variable
 * (comma-separated); default: all namespaces. Connection: `--server URL`
 * (plain HTTP, such as `kubectl proxy` on http://127.0.0.1:8001), else the
 * kubeconfig (`--kubeconfig`, `--context`, `KUBECONFIG`, `~/.kube/config`),
 * else, in a pod, the service account. On Deno, `--allow-env` may be
 * narrowed to the variables it reads: `MIRROR_NAMESPACES` (unless
 * `--namespaces` is given), and without `--server`: `KUBECONFIG`,
 * `KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`, `HOME`.
 *
 * RBAC: list and watch Deployments; list, watch, create, patch and delete
 * ConfigMaps (a server-side apply that creates the mirror is authorized as
 * `create`, one that updates it as `patch`); create and patch `events` (API
 * group `events.k8s.io`, and `""` where it is not served). `--finalizer`:
 * get and patch Deployments. `--leader-elect`: get, create and update
 * `leases` (API group `coordination.k8s.io`) in the lease namespace;
 * `--shards`: get, list, create, update and delete them.
 *
 * A mirror is up to date when its `mirror.kube-reflector.dev/of` label
 * names its Deployment, its owner reference carries the Deployment's uid,
 * and each of the controller's keys (`replicas`, `images`, `generation`)
 * holds the Deployment's value; then nothing is written. Keys added by
 * others survive (server-side apply only changes the fields this field
 * manager owns); a value or the label edited by hand is put back, and a
 * mirror deleted by hand is created again.
 *
 * It prints one line per write (`applied ns/web-mirror ...`,
 * `deleted ns/web-mirror ...`; `already gone ns/web-mirror` when a mirror
 * it meant to delete was deleted first). SIGINT or SIGTERM stops it cleanly
 * (exit 0); a second signal ends it at once, should stopping hang (Deno: exit
 * code 130; Node: by that signal, as without a handler).
 * Exit code 2: a configuration error; 1: it could not start (or lost its
 * permission on the Lease).
 *
 * There is no garbage collector to rely on (the ownerReference lets the
 * cluster's collect mirrors, where one runs): the controller deletes
 * mirrors itself.
 *
 * @module
 */
import {
  Controller,
  controllerSource,
  EventRecorder,
  finalizer,
  healthHandler,
  isNotFound,
  KubeClient,
  type KubeObject,
  type Lister,
  nodeRequestListener,
  resourceClient,
  SharedInformerFactory,
  splitMetaNamespaceKey,
} from "../mod.ts";
import { inClusterConfig, type KubeConnection, loadKubeConfig } from "../kubeconfig.ts";

// --- Types: the fields of the objects this controller reads and writes. -------------------------
// (A types package for Kubernetes objects would do as well; they are kept in this one place.)

/** The parts of an apps/v1 Deployment the mirror summarises. */
interface Deployment extends KubeObject {
  spec?: {
    replicas?: number;
    template?: { spec?: { containers?: Array<{ name: string; image?: string }> } };
  };
}

/** A v1 ConfigMap. */
interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const SELECTOR = "mirror=true"; // which Deployments are mirrored
const OF_LABEL = "mirror.kube-reflector.dev/of"; // on each mirror: the name of its Deployment
const FIELD_MANAGER = "mirror-controller";
const LEASE_NAME = "mirror-controller"; // --leader-elect: the Lease; --shards: the group of members
const FINALIZER = "mirror.kube-reflector.dev/cleanup"; // --finalizer
const mirrorName = (deployment: string) => `${deployment}-mirror`;

// --- The process: exit, stop on SIGINT/SIGTERM (Deno and Node). ----------------------------------

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const exit = (code: number): never => {
  if (g.Deno) g.Deno.exit(code);
  g.process.exit(code);
  throw new Error("unreachable");
};
const messageOf = (err: unknown) => err instanceof Error ? err.message : String(err);
/** Reports a configuration error and exits 2. */
const configError = (message: string): never => {
  console.error(`mirror-controller: ${message}`);
  return exit(2);
};

// Registered first, so that a signal while the configuration loads stops it too. A second
// signal exits at once, should stopping hang (a stuck credential plugin or file read).
const ac = new AbortController();
let signals = 0;
const onSignal = (sig: "SIGINT" | "SIGTERM") => {
  if (++signals > 1) {
    // Node: re-raised without a handler, it ends the process (process.exit would wait for a
    // stuck file read); Deno: exit code 130.
    if (!g.Deno) {
      g.process.removeAllListeners(sig);
      g.process.kill(g.process.pid, sig);
    }
    exit(130);
  }
  console.log("mirror-controller: stopping (signal again to exit at once)");
  ac.abort();
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  if (g.Deno) g.Deno.addSignalListener(sig, () => onSignal(sig));
  else g.process.on(sig, () => onSignal(sig));
}

// --- Configuration: flags, then the environment. -------------------------------------------------

const VALUE_FLAGS = [
  "namespaces",
  "kubeconfig",
  "context",
  "server",
  "workers",
  "lease-namespace",
  "identity",
  "lease-duration",
  "renew-deadline",
  "retry-period",
  "health-port",
  "reconcile-log",
];
const BOOLEAN_FLAGS = ["leader-elect", "shards", "finalizer"]; // `--flag`, or `--flag=true|false`
const USAGE =
  "usage: mirror_controller [--namespaces NS,...] [--kubeconfig PATH] [--context NAME]" +
  " [--server URL] [--workers N] [--leader-elect | --shards] [--lease-namespace NS] [--identity ID]" +
  " [--lease-duration 15s] [--renew-deadline 10s] [--retry-period 2s] [--health-port N]" +
  " [--finalizer] [--reconcile-log PATH]";

/** `--flag value` and `--flag=value` of the known flags; anything else exits 2. */
function parseArgs(args: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const [, name, inline] = /^--([^=]+)(?:=(.*))?$/s.exec(args[i]) ?? [];
    if (name === undefined) configError(`unexpected argument ${i + 1} (not a --flag)\n${USAGE}`);
    const boolean = BOOLEAN_FLAGS.includes(name);
    if (!boolean && !VALUE_FLAGS.includes(name)) configError(`unknown flag --${name}\n${USAGE}`);
    let value: string | undefined;
    if (boolean) {
      value = inline ?? "true"; // never takes the next argument: `--finalizer team-a` is an error
      if (value !== "true" && value !== "false") {
        configError(`--${name} takes no value (or =true, =false), got ${JSON.stringify(value)}`);
      }
    } else {
      value = inline ?? args[++i];
      if (!value || (inline === undefined && value.startsWith("--"))) {
        configError(`--${name} needs a value\n${USAGE}`);
      }
    }
    if (flags.has(name)) configError(`--${name} is given twice`);
    flags.set(name, value!);
  }
  return flags;
}

/**
 * A duration as kube-controller-manager's flags take it (Go's form:
 * `15s`, `500ms`, `1m30s`, `1.5s`; units `ms`, `s`, `m`, `h`), in ms; exits 2
 * when malformed, zero, or longer than an hour.
 */
function parseDuration(flag: string, text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit], 0);
  if (parts.map((p) => p[0]).join("") !== text || !(ms > 0) || ms > 3_600_000) {
    configError(`--${flag} must be a duration such as 15s or 500ms (at most 1h), got ${text}`);
  }
  return Math.round(ms);
}

/** An environment variable, read alone: on Deno, a refused read (a narrowed --allow-env) exits 2. */
function envVar(name: string): string | undefined {
  if (!g.Deno) return g.process?.env[name] || undefined;
  try {
    return g.Deno.env.get(name) || undefined;
  } catch (err) {
    const refused = ["NotCapable", "PermissionDenied"].includes((err as Error)?.name);
    if (!refused) throw err;
    return configError(
      `cannot read the environment variable ${name}: run Deno with --allow-env=${name} (or a broader --allow-env)`,
    );
  }
}

const flags = parseArgs(g.Deno?.args ?? g.process?.argv.slice(2) ?? []);
const namespacesText = flags.get("namespaces") ?? envVar("MIRROR_NAMESPACES") ?? "";
const namespaces = namespacesText.split(",").map((ns) => ns.trim()).filter(Boolean);
if (namespacesText.trim() !== "" && namespaces.length === 0) {
  configError("--namespaces (or MIRROR_NAMESPACES) names no namespace");
}
const workers = Number(flags.get("workers") ?? "2");
if (!Number.isInteger(workers) || workers < 1) {
  configError(`--workers must be an integer >= 1, got ${flags.get("workers")}`);
}
const server = flags.get("server");
if (server && (flags.has("kubeconfig") || flags.has("context"))) {
  configError("--server excludes --kubeconfig and --context");
}
// Replicas: --leader-elect (one leader reconciles) or --shards (each reconciles its share).
const leaderElect = flags.get("leader-elect") === "true";
const sharded = flags.get("shards") === "true";
if (leaderElect && sharded) configError("--leader-elect and --shards exclude each other");
for (
  const flag of ["lease-namespace", "identity", "lease-duration", "renew-deadline", "retry-period"]
) {
  if (flags.has(flag) && !leaderElect && !sharded) {
    configError(`--${flag} needs --leader-elect or --shards`);
  }
}
const duration = (flag: string) => {
  const text = flags.get(flag);
  return text === undefined ? undefined : parseDuration(flag, text);
};
const lease = {
  namespace: flags.get("lease-namespace") ?? namespaces[0] ?? "default",
  name: LEASE_NAME,
  identity: flags.get("identity"),
  leaseDurationMs: duration("lease-duration"),
  renewDeadlineMs: duration("renew-deadline"),
  retryPeriodMs: duration("retry-period"),
};
let healthPort: number | undefined;
if (flags.has("health-port")) {
  healthPort = Number(flags.get("health-port"));
  if (!/^\d+$/.test(flags.get("health-port")!) || healthPort > 65_535) {
    configError(
      `--health-port must be a port number (0: any free one), got ${flags.get("health-port")}`,
    );
  }
}
const useFinalizer = flags.get("finalizer") === "true";
const reconcileLog = flags.get("reconcile-log");
console.log(
  `mirror-controller: Deployments labelled ${SELECTOR} in ${
    namespaces.length > 0 ? namespaces.join(", ") : "all namespaces"
  }`,
);

// The connection: --server (plain HTTP), else a kubeconfig, else the pod's service account.
let conn: KubeConnection | undefined;
if (!server) {
  const kubeconfig = flags.get("kubeconfig");
  const context = flags.get("context");
  const inCluster = !kubeconfig && !context && !envVar("KUBECONFIG") &&
    envVar("KUBERNETES_SERVICE_HOST") !== undefined;
  conn = await (inCluster ? inClusterConfig() : loadKubeConfig({ path: kubeconfig, context }))
    .catch((err) => configError(`cannot load the cluster configuration: ${messageOf(err)}`));
}
const client = conn?.client ?? new KubeClient({ server: server! }); // no conn: --server given
console.log(`mirror-controller: API server ${conn?.server ?? server}`);

// --- Informers: Deployments labelled mirror=true, and the mirrors, per namespace (or all). -------

const factory = new SharedInformerFactory({ client });
const scopes = namespaces.length > 0 ? namespaces : [undefined]; // undefined: all namespaces
const deploymentInformers = scopes.map((namespace) =>
  factory.informerFor<Deployment>({
    apiVersion: "apps/v1",
    resource: "deployments",
    namespace,
    labelSelector: SELECTOR,
  })
);
const mirrorInformers = scopes.map((namespace) =>
  factory.informerFor<ConfigMap>({
    apiVersion: "v1",
    resource: "configmaps",
    namespace,
    labelSelector: OF_LABEL, // only ConfigMaps with the label: the mirrors
  })
);
const listerOf = <T extends KubeObject>(informers: { lister(): Lister<T> }[]) => {
  const listers = informers.map((i) => i.lister());
  const byNamespace = new Map(namespaces.map((ns, i) => [ns, listers[i]]));
  return (namespace: string) => namespaces.length > 0 ? byNamespace.get(namespace) : listers[0];
};
const deployments = listerOf(deploymentInformers);
const mirrors = listerOf(mirrorInformers);
const configMaps = resourceClient<ConfigMap>(client, { apiVersion: "v1", resource: "configmaps" });
const deploymentsApi = resourceClient<Deployment>(client, {
  apiVersion: "apps/v1",
  resource: "deployments",
});
// Events on the Deployments (`kubectl describe deployment` shows them); never awaited.
const recorder = new EventRecorder({ client, component: FIELD_MANAGER, instance: lease.identity });
const recordEvent = (deployment: KubeObject, reason: string, message: string) =>
  recorder.event(
    { apiVersion: "apps/v1", kind: "Deployment", metadata: deployment.metadata },
    { type: "Normal", reason, message },
  );

// --- Reconcile: make the mirror of one Deployment match it (key "namespace/deployment"). ---------

/** What the mirror of `d` holds. */
function summary(d: Deployment): Record<string, string> {
  const containers = d.spec?.template?.spec?.containers ?? [];
  return {
    replicas: String(d.spec?.replicas ?? 1), // the API server's default
    images: containers.map((c) => c.image ?? "").join(","),
    generation: String(d.metadata.generation ?? 0),
  };
}

/** Whether `mirror` already states what this controller would apply for `deployment`. */
function upToDate(mirror: ConfigMap, deployment: Deployment, data: Record<string, string>) {
  const owners = (mirror.metadata.ownerReferences ?? []) as Array<{ uid?: string }>;
  return mirror.metadata.labels?.[OF_LABEL] === deployment.metadata.name &&
    owners.some((ref) => ref.uid === deployment.metadata.uid) &&
    // Only the controller's own keys: keys others added are theirs, and stay.
    Object.entries(data).every(([key, value]) => mirror.data?.[key] === value);
}

/** Makes the mirror of `deployment` state its summary (server-side apply; no write when up to date). */
async function applyMirror(deployment: Deployment, signal: AbortSignal): Promise<void> {
  const { namespace = "", name = "" } = deployment.metadata;
  const target = mirrorName(name);
  const data = summary(deployment);
  const mirror = mirrors(namespace)?.get(namespace, target);
  if (mirror && upToDate(mirror, deployment, data)) return; // no write

  // Server-side apply: states the fields this controller owns; creates the mirror when missing.
  await configMaps.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: target,
      namespace,
      labels: { [OF_LABEL]: name },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          name,
          uid: deployment.metadata.uid,
          controller: true,
        },
      ],
    },
    data,
  }, { fieldManager: FIELD_MANAGER, force: true, signal });
  const what = `replicas=${data.replicas} images=${data.images} generation=${data.generation}`;
  console.log(`applied ${namespace}/${target} ${what}`);
  recordEvent(deployment, "MirrorApplied", `applied ConfigMap ${target}: ${what}`);
}

/**
 * Deletes the mirror of the Deployment `namespace/name`, if there is one: the
 * one the mirror informer knows (never a newer ConfigMap of that name), or,
 * when `evenUnseen` (the Deployment is being deleted), one it has not seen yet.
 */
async function deleteMirror(
  deployment: KubeObject,
  why: string,
  { signal, evenUnseen = false }: { signal: AbortSignal; evenUnseen?: boolean },
): Promise<void> {
  const { namespace = "", name = "" } = deployment.metadata;
  const target = mirrorName(name);
  const mirror = mirrors(namespace)?.get(namespace, target);
  if (!mirror && !evenUnseen) return;
  try {
    await configMaps.delete(target, {
      namespace,
      preconditions: mirror ? { uid: mirror.metadata.uid } : undefined,
      signal,
    });
    console.log(`deleted ${namespace}/${target} (${why})`);
    recordEvent(deployment, "MirrorDeleted", `deleted ConfigMap ${target} (${why})`);
  } catch (err) {
    if (!isNotFound(err)) throw err; // thrown: retried with backoff
    if (mirror) console.log(`already gone ${namespace}/${target}`);
  }
}

/**
 * --finalizer: a Deployment the informer no longer has (deleted, or no
 * longer labelled mirror=true) may still carry the finalizer, and could
 * then never be deleted: read it from the API server and remove the
 * finalizer, with its resourceVersion as a precondition (a 409 is retried).
 */
async function releaseUnlabelled(
  namespace: string,
  name: string,
  signal: AbortSignal,
): Promise<"labelled" | undefined> {
  const current = await deploymentsApi.get(name, { namespace, signal }).catch((err) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
  if (!current) return; // gone
  if (current.metadata.labels?.mirror === "true") return "labelled"; // ours again: its event comes
  const finalizers = current.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return;
  await deploymentsApi.patch(name, {
    metadata: {
      resourceVersion: current.metadata.resourceVersion, // the precondition: a 409 is retried
      finalizers: finalizers.filter((f) => f !== FINALIZER),
    },
  }, { namespace, signal });
  console.log(`released ${namespace}/${name} (finalizer removed: no longer labelled)`);
}

async function reconcile(key: string, { signal }: { signal: AbortSignal }): Promise<void> {
  const { namespace, name } = splitMetaNamespaceKey(key);
  const deployment = deployments(namespace)?.get(namespace, name);
  if (!deployment) {
    // Deleted, or no longer labelled mirror=true: remove its mirror, if there is one.
    if (useFinalizer && await releaseUnlabelled(namespace, name, signal) === "labelled") return;
    await deleteMirror({ metadata: { namespace, name } }, "Deployment gone or not labelled", {
      signal,
    });
    return;
  }
  if (!useFinalizer) return await applyMirror(deployment, signal);
  // The finalizer goes on before the first apply ("added": that change brings the Deployment
  // back, to apply); once the Deployment is being deleted the mirror is deleted, then the
  // finalizer removed: a delete is never lost, even while no replica runs.
  await finalizer(deploymentsApi, FINALIZER, deployment, {
    apply: (d) => applyMirror(d, signal),
    cleanup: (d) => deleteMirror(d, "Deployment deleted", { signal, evenUnseen: true }),
  }, { signal });
}

/** --reconcile-log: `start <pid> <key>` before, `end <pid> <key> ok|error` after each reconcile. */
function logged(path: string, inner: typeof reconcile): typeof reconcile {
  const pid: number = g.Deno?.pid ?? g.process.pid;
  const append = (line: string) => {
    if (g.Deno) g.Deno.writeTextFileSync(path, `${line}\n`, { append: true });
    else appendFileSync!(path, `${line}\n`); // O_APPEND: one write per line, in a global order
  };
  return async (key, context) => {
    append(`start ${pid} ${key}`);
    let outcome = "error";
    try {
      await inner(key, context);
      outcome = "ok";
    } finally {
      append(`end ${pid} ${key} ${outcome}`);
    }
  };
}
// Node only, loaded before any reconcile (Deno has Deno.writeTextFileSync).
const appendFileSync: ((path: string, data: string) => void) | undefined = reconcileLog && !g.Deno
  ? (await import("node:fs")).appendFileSync
  : undefined;

// --- The controller, one replica of several with --leader-elect or --shards. -------------------

const replicas = {
  client,
  ...Object.fromEntries(Object.entries(lease).filter(([, v]) => v !== undefined)),
} as typeof lease & { client: KubeClient };
let controller: Controller;
try {
  controller = new Controller({
    name: FIELD_MANAGER,
    informers: [
      ...deploymentInformers, // a Deployment's change reconciles it
      // A mirror's change (or its presence in the initial list, after a restart) reconciles its
      // Deployment: a mirror edited or deleted by hand is put back, an orphan is deleted.
      ...mirrorInformers.map((informer) =>
        controllerSource(informer, (cm) => {
          const of = cm.metadata.labels?.[OF_LABEL];
          return of ? `${cm.metadata.namespace}/${of}` : undefined;
        })
      ),
    ],
    workers,
    reconcile: reconcileLog ? logged(reconcileLog, reconcile) : reconcile,
    onError: (err, key) =>
      console.warn(`reconcile ${key ?? "(enqueue)"} failed: ${messageOf(err)}`),
    ...(leaderElect ? { leaderElection: replicas } : {}),
    ...(sharded ? { shards: replicas } : {}),
  });
} catch (err) {
  // The library's validation (TypeError, RangeError): a lease duration not above the renew
  // deadline, an identity that is not a DNS name...
  configError(messageOf(err));
}

/** One line about what this replica owns (printed on each change). */
function ownershipLine(): string {
  const o = controller.ownership;
  if (o.mode === "leader") return o.owning ? "leading" : `standby (leader: ${o.leader || "none"})`;
  if (o.mode === "shards") {
    const members = o.members ?? [];
    const list = `${members.length} members (${members.join(", ")})`;
    return o.owning ? `owning a share: 1 of ${list}` : `owning nothing: ${list}`;
  }
  return "owning every key (one replica)";
}

// --- Health: /livez, /readyz, /healthz on 127.0.0.1 (--health-port). ---------------------------

let healthServer: { close(): Promise<void> } | undefined;
if (healthPort !== undefined) {
  const handler = healthHandler({
    informers: [...deploymentInformers, ...mirrorInformers],
    // For information: what this replica owns (a standby is ready too).
    checks: [{ name: "controller", check: () => ({ ok: true, message: ownershipLine() }) }],
  });
  const listening = (port: number) => console.log(`health: http://127.0.0.1:${port}/readyz`);
  try {
    if (g.Deno) {
      const s = g.Deno.serve({
        hostname: "127.0.0.1",
        port: healthPort,
        onListen: ({ port }: { port: number }) => listening(port),
      }, handler);
      healthServer = { close: () => s.shutdown() };
    } else {
      const { createServer } = await import("node:http");
      const s = createServer(nodeRequestListener(handler));
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(healthPort, "127.0.0.1", () => resolve());
      });
      listening((s.address() as { port: number }).port);
      healthServer = {
        close: () => new Promise<void>((resolve) => s.close(() => resolve())),
      };
    }
  } catch (err) {
    console.error(
      `mirror-controller: cannot serve health on port ${healthPort}: ${messageOf(err)}`,
    );
    exit(1);
  }
}

// --- Run until SIGINT or SIGTERM. --------------------------------------------------------------

const informing = factory.start({ signal: ac.signal }); // the controller does not start informers
factory.waitForCacheSyncResult(ac.signal).then((r) => {
  if (!r.synced) return;
  const count = (ls: { lister(): Lister<KubeObject> }[]) =>
    ls.reduce((n, i) => n + i.lister().list().length, 0);
  console.log(
    `synced: ${count(deploymentInformers)} Deployment(s) to mirror, ${
      count(mirrorInformers)
    } mirror(s)`,
  );
});
// What this replica owns: a line on each change (leading, standby, its share of the keys).
let lastOwnership = "";
const watchOwnership = setInterval(() => {
  const line = ownershipLine();
  if (line !== lastOwnership) console.log(lastOwnership = line);
}, 200);
if (leaderElect || sharded) console.log(`identity: ${controller!.ownership.identity}`);
else clearInterval(watchOwnership);
let code = 0;
try {
  await controller!.run({ signal: ac.signal }); // resolves once stopped
} catch (err) {
  // an informer stopped before it synced; a 401/403 on the Lease(s)
  console.error(`mirror-controller: ${messageOf(err)}`);
  code = 1;
}
clearInterval(watchOwnership);
ac.abort();
await informing;
await recorder.close({ signal: AbortSignal.timeout(5_000) }); // the Events still pending
await healthServer?.close();
await conn?.close();
console.log("mirror-controller: stopped");
exit(code);
