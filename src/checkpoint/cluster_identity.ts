import type { KubeClient } from "../transport/kube_client.ts";
import { clusterUid } from "../transport/_cluster_uid.ts";

/**
 * The cluster's identity for a checkpoint: the UID of the `kube-system`
 * namespace (`GET /api/v1/namespaces/kube-system`), which is created once
 * with the cluster and never changes while its etcd lives; a cluster
 * rebuilt from scratch gets a new one, so a checkpoint of the old one is
 * refused ("foreign-cluster"). Resolves `undefined` when it cannot be read
 * (no permission to get namespaces, no such namespace, a network failure,
 * an answer without a UID): the check is then skipped, as
 * `identityMismatch` compares `cluster` only when both sides have one.
 * Never rejects, except with `signal.reason` on abort. Keep a UID once
 * read, but not an `undefined`: ask again later (a Reflector does, at each
 * load and save until it has one), or every checkpoint goes unchecked.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient } from "../../mod.ts";
 * import { clusterIdentity } from "../../checkpoint.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * assert.equal(await clusterIdentity(client), undefined); // no kube-system namespace yet
 * const ns = server.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "kube-system" } });
 * assert.equal(await clusterIdentity(client), ns.metadata.uid);
 * await server.close();
 * ```
 */
export function clusterIdentity(
  client: KubeClient,
  options: { signal?: AbortSignal } = {},
): Promise<string | undefined> {
  // the same reader as resourceListerWatcher.identity()
  return clusterUid(client, options);
}
