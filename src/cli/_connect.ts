/**
 * How a command reaches the cluster, as kubectl does: `--server URL`
 * (plain HTTP such as `kubectl proxy`, no credentials), else the kubeconfig
 * (`--kubeconfig`, `--context`, `KUBECONFIG`, `~/.kube/config`), else, in a
 * pod (`KUBERNETES_SERVICE_HOST` set and no kubeconfig named), the service
 * account. The default namespace is the context's (the pod's in-cluster),
 * else `default`.
 *
 * @module
 */
import { KubeClient } from "../transport/kube_client.ts";
import { loadKubeConfig } from "../kubeconfig/load_kube_config.ts";
import { inClusterConfig } from "../kubeconfig/in_cluster_config.ts";
import type { CliEnv } from "./cli_env.ts";
import { UsageError } from "./_usage_error.ts";

/** A connected client, the namespace to default to, and how to let it go. */
export interface CliConnection {
  client: KubeClient;
  /** The namespace to default to. */
  namespace: string;
  /** The API server URL. */
  server: string;
  /** Releases the connection pool. */
  close(): Promise<void>;
}

/** The connection flags. */
export interface ConnectionFlags {
  server?: string;
  kubeconfig?: string;
  context?: string;
}

/** Thrown when the configuration cannot be loaded (exit code 1). */
export class ConfigLoadError extends Error {
  /** Creates the error. */
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = "ConfigLoadError";
  }
}

/** Connects as the flags and the environment say. */
export async function connect(
  flags: ConnectionFlags,
  env: CliEnv,
  command: string,
): Promise<CliConnection> {
  if (flags.server !== undefined) {
    if (flags.kubeconfig !== undefined || flags.context !== undefined) {
      throw new UsageError("--server excludes --kubeconfig and --context", command);
    }
    let url: URL;
    try {
      url = new URL(flags.server);
    } catch {
      throw new UsageError(`--server: not a URL: "${flags.server}"`, command);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new UsageError(`--server: not an http or https URL: "${flags.server}"`, command);
    }
    return {
      client: new KubeClient({ server: url }),
      namespace: "default",
      server: flags.server,
      close: () => Promise.resolve(),
    };
  }
  const inCluster = flags.kubeconfig === undefined && flags.context === undefined &&
    !env.env("KUBECONFIG") && env.env("KUBERNETES_SERVICE_HOST") !== undefined;
  try {
    const conn = inCluster
      ? await inClusterConfig({
        env: {
          KUBERNETES_SERVICE_HOST: env.env("KUBERNETES_SERVICE_HOST"),
          KUBERNETES_SERVICE_PORT: env.env("KUBERNETES_SERVICE_PORT"),
        },
      })
      : await loadKubeConfig({
        path: flags.kubeconfig,
        context: flags.context,
        env: {
          KUBECONFIG: env.env("KUBECONFIG"),
          HOME: env.env("HOME"),
          USERPROFILE: env.env("USERPROFILE"),
        },
      });
    return {
      client: conn.client,
      namespace: conn.namespace || "default",
      server: conn.server,
      close: () => conn.close(),
    };
  } catch (err) {
    const what = inCluster ? "the in-cluster configuration" : "the kubeconfig";
    throw new ConfigLoadError(
      `cannot load ${what}: ${err instanceof Error ? err.message : String(err)}`,
      err,
    );
  }
}
