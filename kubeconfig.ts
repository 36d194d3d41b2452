/**
 * Connecting to a real cluster: kubeconfig files (as kubectl reads them),
 * in-cluster service-account configuration, credentials (tokens, rotating
 * token files, client certificates, basic auth, exec plugins) and TLS on
 * each runtime (undici on Node, `Deno.createHttpClient` on Deno, Bun's
 * `fetch` TLS options). A separate entry point so that `mod.ts` stays
 * web-standard only; this one uses `node:fs`/`node:child_process` lazily
 * and the `yaml` and `undici` npm packages.
 *
 * @example
 * ```ts
 * import { loadKubeConfig } from "./kubeconfig.ts";
 * import { Indexer, metaNamespaceKeyFunc, Reflector, resourceListerWatcher } from "./mod.ts";
 *
 * const conn = await loadKubeConfig(); // KUBECONFIG or ~/.kube/config, current-context
 * const lw = resourceListerWatcher(conn.client, { apiVersion: "v1", resource: "configmaps", namespace: conn.namespace });
 * const store = new Indexer(metaNamespaceKeyFunc, {});
 * const ac = new AbortController();
 * const done = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" }).run({ signal: ac.signal });
 * ac.abort();
 * await done;
 * await conn.close();
 * ```
 *
 * @module
 */
export { loadKubeConfig, type LoadKubeConfigOptions } from "./src/kubeconfig/load_kube_config.ts";
export {
  inClusterConfig,
  type InClusterConfigOptions,
  SERVICE_ACCOUNT_DIR,
} from "./src/kubeconfig/in_cluster_config.ts";
export { readKubeConfig, type ReadKubeConfigOptions } from "./src/kubeconfig/read_kube_config.ts";
export { KubeConfig } from "./src/kubeconfig/kube_config.ts";
export { KubeConnection, type KubeConnectionInit } from "./src/kubeconfig/kube_connection.ts";
export { KubeConfigError, TlsUnsupportedError } from "./src/kubeconfig/kube_config_error.ts";
export {
  tokenFileProvider,
  type TokenFileProviderOptions,
} from "./src/kubeconfig/token_file_provider.ts";
export {
  execCredentialProvider,
  type ExecCredentialProviderOptions,
  type ExecStderr,
} from "./src/kubeconfig/exec_credential_provider.ts";
export {
  createTlsFetch,
  type CreateTlsFetchOptions,
  type TlsFetch,
  type TlsSettings,
} from "./src/kubeconfig/tls_fetch.ts";
export type { ContextEntry, ExecEntry } from "./src/kubeconfig/_schema.ts";
