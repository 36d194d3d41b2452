/**
 * `withCluster(release, fn)`: one e2e test's cluster, and everything the test
 * starts on it (connections, reflectors, its own cleanups), stopped in reverse
 * order however the test ends.
 *
 * @module
 */
import type { KubeClient, ReflectorOptions } from "../../mod.ts";
import { type KubeConnection, loadKubeConfig } from "../../kubeconfig.ts";
import { type Cluster, type ClusterOptions, type Release, startCluster } from "./_cluster.ts";
import { createNamespace, type RunningReflector, startReflector, type Target } from "./_reflect.ts";

/** What a test gets from {@linkcode withCluster}. */
export interface ClusterScope {
  release: Release;
  cluster: Cluster;
  /** The admin client (client certificate, `system:masters`). */
  admin: KubeClient;
  /** Creates these namespaces, in order. */
  namespaces(...names: string[]): Promise<void>;
  /**
   * Loads one of the cluster's kubeconfigs (default: `"token"`, the bearer
   * token read from a file) or the kubeconfig file at `{ path }`; closed at
   * the end (closing it earlier is fine).
   */
  connect(which?: "token" | "cert" | "proxy" | { path: string }): Promise<KubeConnection>;
  /**
   * Starts a reflector ({@linkcode startReflector}: fast backoff unless
   * `options` are given); stopped at the end (stopping it earlier is fine).
   */
  reflect(client: KubeClient, target: Target, options?: ReflectorOptions): RunningReflector;
  /** Runs `cleanup` at the end; the last registered runs first, the cluster stops last. */
  defer(cleanup: () => unknown): void;
}

/**
 * Starts a cluster of `release` (with `options`), runs `fn`, then runs every
 * cleanup `fn` registered, newest first (reflectors stop before their
 * connections close), and stops the cluster, whether `fn` passed or failed.
 * `fn`'s error wins over a cleanup's; a cleanup's error fails a passing test.
 */
export function withCluster(
  release: Release,
  fn: (scope: ClusterScope) => Promise<void>,
): Promise<void>;
export function withCluster(
  release: Release,
  options: Omit<ClusterOptions, "release">,
  fn: (scope: ClusterScope) => Promise<void>,
): Promise<void>;
export async function withCluster(
  release: Release,
  a: Omit<ClusterOptions, "release"> | ((scope: ClusterScope) => Promise<void>),
  b?: (scope: ClusterScope) => Promise<void>,
): Promise<void> {
  const [options, fn] = typeof a === "function" ? [{}, a] : [a, b!];
  const cluster = await startCluster({ ...options, release });
  const cleanups: Array<() => unknown> = [() => cluster.stop()];
  const defer = (cleanup: () => unknown) => void cleanups.push(cleanup);
  const admin = cluster.admin.client;
  const scope: ClusterScope = {
    release,
    cluster,
    admin,
    namespaces: async (...names) => {
      for (const name of names) await createNamespace(admin, name);
    },
    connect: async (which = "token") => {
      const path = typeof which === "string" ? cluster.kubeconfigs[which] : which.path;
      if (path === undefined) throw new Error(`no ${which} kubeconfig: start with { proxy: true }`);
      const conn = await loadKubeConfig({ path, env: {} });
      defer(() => conn.close());
      return conn;
    },
    reflect: (client, target, reflectorOptions) => {
      const r = startReflector(client, target, reflectorOptions);
      defer(() => r.stop());
      return r;
    },
    defer,
  };
  let failed: { error: unknown } | undefined;
  try {
    await fn(scope);
  } catch (error) {
    failed = { error };
  }
  let cleanupFailed: { error: unknown } | undefined;
  for (const cleanup of cleanups.reverse()) {
    try {
      await cleanup();
    } catch (error) {
      if (failed) console.error("e2e: a cleanup failed after the test had failed:", error);
      cleanupFailed ??= { error };
    }
  }
  if (failed) throw failed.error;
  if (cleanupFailed) throw cleanupFailed.error;
}
