/**
 * A Kubernetes reflector on web-standard APIs: list, then watch from the
 * list's resourceVersion, forever, keeping a local store exactly equal to
 * the server's objects and recovering from every fault a real cluster and
 * network produce. Runs unchanged on Deno, Node (20.18+), Bun and edge
 * runtimes; imports nothing but web standards.
 *
 * @example
 * ```ts
 * import { Indexer, KubeClient, metaNamespaceKeyFunc, namespaceIndexFunc, Reflector, resourceListerWatcher } from "./mod.ts";
 *
 * const client = new KubeClient({ server: "http://127.0.0.1:8001" });
 * const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps", namespace: "default" });
 * const store = new Indexer(metaNamespaceKeyFunc, { namespace: namespaceIndexFunc });
 * const reflector = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" });
 * const ac = new AbortController();
 * const done = reflector.run({ signal: ac.signal });
 * await reflector.synced;
 * console.log(store.listKeys());
 * ac.abort();
 * await done;
 * ```
 *
 * @module
 */
export * from "./src/api/types.ts";
export * from "./src/api/kube_status_error.ts";
export * from "./src/api/predicates.ts";
export * from "./src/api/errors.ts";
