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
 * Namespaces: `--namespaces` or the `MIRROR_NAMESPACES` variable
 * (comma-separated); default: all namespaces. Connection: `--server URL`
 * (plain HTTP, such as `kubectl proxy` on http://127.0.0.1:8001), else the
 * kubeconfig (`--kubeconfig`, `--context`, `KUBECONFIG`, `~/.kube/config`),
 * else, in a pod, the service account. It needs to list and watch
 * Deployments, and to list, watch, patch and delete ConfigMaps.
 *
 * It prints one line per write (`applied ns/web-mirror ...`,
 * `deleted ns/web-mirror ...`), and stops cleanly on SIGINT or SIGTERM
 * (exit 0). Exit code 2: a configuration error; 1: it could not start.
 *
 * There is no garbage collector to rely on (the ownerReference lets the
 * cluster's collect mirrors, where one runs): the controller deletes
 * mirrors itself.
 *
 * @module
 */
import {
  Controller,
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

// --- Configuration. ------------------------------------------------------------------------------

const SELECTOR = "mirror=true"; // which Deployments are mirrored
const OF_LABEL = "mirror.kube-reflector.dev/of"; // on each mirror: the name of its Deployment
const FIELD_MANAGER = "mirror-controller";
const mirrorName = (deployment: string) => `${deployment}-mirror`;

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const argv: string[] = g.Deno?.args ?? g.process?.argv.slice(2) ?? [];
const env: Record<string, string | undefined> = g.Deno ? g.Deno.env.toObject() : g.process.env;
const arg = (name: string, fallback = ""): string => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
};
const exit = (code: number): never => {
  if (g.Deno) g.Deno.exit(code);
  g.process.exit(code);
  throw new Error("unreachable");
};
const messageOf = (err: unknown) => err instanceof Error ? err.message : String(err);

const namespaces = (arg("namespaces") || env.MIRROR_NAMESPACES || "")
  .split(",").map((ns) => ns.trim()).filter(Boolean);
const workers = Number(arg("workers", "2"));
if (!Number.isInteger(workers) || workers < 1) {
  console.error(`--workers must be an integer >= 1, got ${arg("workers")}`);
  exit(2);
}

// The connection: --server (plain HTTP), else a kubeconfig, else the pod's service account.
const server = arg("server");
let conn: KubeConnection | undefined;
if (!server) {
  const kubeconfig = arg("kubeconfig") || undefined;
  const context = arg("context") || undefined;
  const inCluster = !kubeconfig && !context && !env.KUBECONFIG && env.KUBERNETES_SERVICE_HOST;
  conn = await (inCluster ? inClusterConfig() : loadKubeConfig({ path: kubeconfig, context }))
    .catch((err) => {
      console.error(`cannot load the cluster configuration: ${messageOf(err)}`);
      return exit(2);
    });
}
const client = conn?.client ?? new KubeClient({ server });

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

const sameData = (a: Record<string, string> | undefined, b: Record<string, string>) =>
  a !== undefined && Object.keys(a).length === Object.keys(b).length &&
  Object.entries(b).every(([k, v]) => a[k] === v);

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
    } catch (err) {
      if (!isNotFound(err)) throw err; // thrown: retried with backoff
    }
    console.log(`deleted ${namespace}/${target} (Deployment gone or not labelled)`);
    return;
  }

  const data = summary(deployment);
  const uid = deployment.metadata.uid;
  const owned = (mirror?.metadata.ownerReferences as Array<{ uid?: string }> | undefined)
    ?.some((ref) => ref.uid === uid);
  if (mirror && owned && sameData(mirror.data, data)) return; // up to date: no write

  // Server-side apply: states the fields this controller owns; creates the mirror when missing.
  await configMaps.apply({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: target,
      namespace,
      labels: { [OF_LABEL]: name },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "Deployment", name, uid, controller: true },
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
    ...mirrorInformers.map((informer) => ({
      informer,
      // A mirror's change (or its presence in the initial list, after a restart) reconciles
      // its Deployment: a mirror edited by hand is put back, an orphan is deleted.
      map: (cm: ConfigMap) => {
        const of = cm.metadata.labels?.[OF_LABEL];
        return of ? `${cm.metadata.namespace}/${of}` : undefined;
      },
    })),
  ],
  workers,
  reconcile,
  onError: (err, key) => console.warn(`reconcile ${key ?? "(enqueue)"} failed: ${messageOf(err)}`),
});

// --- Run until SIGINT or SIGTERM. --------------------------------------------------------------

const ac = new AbortController();
const stop = () => ac.abort();
for (const sig of ["SIGINT", "SIGTERM"]) {
  if (g.Deno) g.Deno.addSignalListener(sig, stop);
  else g.process.once(sig, stop);
}

console.log(
  `mirror-controller: Deployments labelled ${SELECTOR} in ${
    namespaces.length > 0 ? namespaces.join(", ") : "all namespaces"
  }, on ${conn?.server ?? server}`,
);
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
