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
 *     [--namespaces team-a,team-b] [--kubeconfig PATH] [--context NAME] [--server URL] [--workers 2]
 *   node npm/esm/examples/mirror_controller.js ...   (after `npm run build:npm`)
 *
 * Flags take their value as `--flag value` or `--flag=value`; any other
 * argument (an unknown flag, a missing value) is an error (exit 2), never
 * ignored: a mistyped `--namespace` must not widen it to every namespace.
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
 * `create`, one that updates it as `patch`).
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
 * Exit code 2: a configuration error; 1: it could not start.
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
  isNotFound,
  KubeClient,
  type KubeObject,
  type Lister,
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

const FLAGS = ["namespaces", "kubeconfig", "context", "server", "workers"];
const USAGE =
  "usage: mirror_controller [--namespaces NS,...] [--kubeconfig PATH] [--context NAME] [--server URL] [--workers N]";

/** `--flag value` and `--flag=value` of the known flags; anything else exits 2. */
function parseArgs(args: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const [, name, inline] = /^--([^=]+)(?:=(.*))?$/s.exec(args[i]) ?? [];
    if (name === undefined) configError(`unexpected argument ${i + 1} (not a --flag)\n${USAGE}`);
    if (!FLAGS.includes(name)) configError(`unknown flag --${name}\n${USAGE}`);
    const value = inline ?? args[++i];
    if (!value || (inline === undefined && value.startsWith("--"))) {
      configError(`--${name} needs a value\n${USAGE}`);
    }
    if (flags.has(name)) configError(`--${name} is given twice`);
    flags.set(name, value);
  }
  return flags;
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

async function reconcile(key: string, { signal }: { signal: AbortSignal }): Promise<void> {
  const { namespace, name } = splitMetaNamespaceKey(key);
  const target = mirrorName(name);
  const deployment = deployments(namespace)?.get(namespace, name);
  const mirror = mirrors(namespace)?.get(namespace, target);

  if (!deployment) {
    // Deleted, or no longer labelled mirror=true: remove its mirror, if there is one.
    if (!mirror) return;
    try {
      await configMaps.delete(target, {
        namespace,
        preconditions: { uid: mirror.metadata.uid }, // never a newer ConfigMap of that name
        signal,
      });
      console.log(`deleted ${namespace}/${target} (Deployment gone or not labelled)`);
    } catch (err) {
      if (!isNotFound(err)) throw err; // thrown: retried with backoff
      console.log(`already gone ${namespace}/${target}`);
    }
    return;
  }

  const data = summary(deployment);
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
  console.log(
    `applied ${namespace}/${target} replicas=${data.replicas} images=${data.images} generation=${data.generation}`,
  );
}

const controller = new Controller({
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
  reconcile,
  onError: (err, key) => console.warn(`reconcile ${key ?? "(enqueue)"} failed: ${messageOf(err)}`),
});

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
let code = 0;
try {
  await controller.run({ signal: ac.signal }); // resolves once stopped
} catch (err) {
  console.error(`mirror-controller: ${messageOf(err)}`); // an informer stopped before it synced
  code = 1;
}
ac.abort();
await informing;
await conn?.close();
console.log("mirror-controller: stopped");
exit(code);
