/**
 * Internals of lister-watchers: the cluster's identity.
 *
 * @module
 */
import type { KubeClient } from "./kube_client.ts";

/**
 * The UID of the `kube-system` namespace (a cluster's identity: a new
 * cluster, or a new etcd, never has the same one), or `undefined` when it
 * cannot be read (no permission, no such namespace, no answer). Rejects
 * only with `signal.reason`, on abort.
 */
export async function clusterUid(
  client: KubeClient,
  options: { signal?: AbortSignal } = {},
): Promise<string | undefined> {
  const { signal } = options;
  signal?.throwIfAborted();
  try {
    const ns = await client.requestJson<{ metadata?: { uid?: unknown } }>(
      "/api/v1/namespaces/kube-system",
      { signal },
    );
    const uid = ns?.metadata?.uid;
    return typeof uid === "string" && uid !== "" ? uid : undefined;
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    void err; // 403, 404, a network failure: no identity; checkpoints are then matched without it
    return undefined;
  }
}
