/**
 * Connecting to a real cluster: kubeconfig files (as kubectl reads them),
 * in-cluster service-account configuration, credentials (tokens, rotating
 * token files, client certificates, basic auth, exec plugins) and TLS on
 * each runtime (undici on Node, `Deno.createHttpClient` on Deno, Bun's
 * `fetch` TLS options). A separate entry point so that `mod.ts` stays
 * web-standard only; this one uses `node:fs`/`node:child_process` lazily
 * and the `yaml` npm package, and imports `undici` (an optional peer
 * dependency: `npm install undici@^7`) only for custom TLS on Node, or a
 * {@linkcode MissingPackageError} says to install it.
 *
 * For Node, Deno and Bun: its loaders read files and run processes. On an
 * edge runtime (Cloudflare Workers, Vercel edge, Deno Deploy) import
 * `kube-reflector/kubeconfig/edge` (`kubeconfig_edge.ts`) instead: kubeconfig
 * from text and inline credentials, no `node:*` import, the same classes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadKubeConfig } from "./kubeconfig.ts";
 * import { FakeApiServer } from "./testkit.ts";
 * import { Indexer, metaNamespaceKeyFunc, Reflector, resourceListerWatcher } from "./mod.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["s3cr3t"] });
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
 * // Usually `await loadKubeConfig()`: KUBECONFIG or ~/.kube/config, its current-context.
 * const conn = await loadKubeConfig({
 *   text: `
 * current-context: dev
 * clusters: [{ name: dev, cluster: { server: "${server.url}" } }]
 * users: [{ name: me, user: { token: s3cr3t } }]
 * contexts: [{ name: dev, context: { cluster: dev, user: me, namespace: apps } }]
 * `,
 * });
 * try {
 *   const lw = resourceListerWatcher(conn.client, {
 *     apiVersion: "v1",
 *     resource: "configmaps",
 *     namespace: conn.namespace,
 *   });
 *   const store = new Indexer(metaNamespaceKeyFunc, {});
 *   const ac = new AbortController();
 *   const reflector = new Reflector(lw, store, { name: "configmaps", expectedKind: "ConfigMap" });
 *   const done = reflector.run({ signal: ac.signal });
 *   await reflector.synced;
 *   assert.deepEqual(store.listKeys(), ["apps/a"]);
 *   ac.abort();
 *   await done;
 * } finally {
 *   await conn.close();
 *   await server.close();
 * }
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
export { MissingPackageError } from "./src/kubeconfig/missing_package_error.ts";
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
