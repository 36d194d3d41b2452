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
export * from "./src/api/malformed_response_error.ts";
export * from "./src/api/retry_after.ts";
export * from "./src/cache/key_error.ts";
export * from "./src/cache/deleted_final_state_unknown.ts";
export * from "./src/cache/key_func.ts";
export * from "./src/cache/store.ts";
export * from "./src/cache/indexer.ts";
export * from "./src/cache/namespace_index.ts";
export * from "./src/transport/resource_path.ts";
export * from "./src/transport/kube_client.ts";
export * from "./src/transport/lister_watcher.ts";
export * from "./src/transport/server_features.ts";
export * from "./src/transport/resource_lister_watcher.ts";
export * from "./src/transport/watch_stream.ts";
export * from "./src/transport/list_stream.ts";
export * from "./src/reflector/clock.ts";
export * from "./src/reflector/backoff.ts";
export * from "./src/reflector/list_pager.ts";
export * from "./src/reflector/watcher_options.ts";
export * from "./src/reflector/watcher_defaults.ts";
export * from "./src/reflector/watcher.ts";
export * from "./src/reflector/reflector.ts";
export * from "./src/reflector/namespace_keyed_indexer_and_reflector.ts";
export * from "./src/informer/resource_event_handler.ts";
export * from "./src/informer/handler_registration.ts";
export * from "./src/informer/informer_change.ts";
export * from "./src/informer/informer_store.ts";
export * from "./src/informer/informer_options.ts";
export * from "./src/informer/informer.ts";
export * from "./src/informer/transform.ts";
export * from "./src/informer/label_selector.ts";
export * from "./src/informer/lister.ts";
export * from "./src/informer/wait_for_cache_sync.ts";
export * from "./src/informer/shared_informer_factory.ts";
export * from "./src/metrics/reflector_metrics.ts";
export * from "./src/metrics/error_reason.ts";
