/**
 * Connecting to a cluster from a kubeconfig given as text, on every
 * runtime, edge included (Cloudflare Workers, Vercel's edge runtime, Deno
 * Deploy, browsers): parsing (YAML or JSON) and inline credentials (a
 * bearer `token`, `username`/`password`; inline certificate data where the
 * runtime's `fetch` can use it, i.e. Deno and Bun). It imports no `node:*`
 * module and no package but the `yaml` parser, so it bundles for the
 * browser platform.
 *
 * What it cannot do fails with a clear error naming the kubeconfig field:
 * files (`certificate-authority`, `tokenFile`, `~/.kube/config`), exec
 * credential plugins and in-cluster configuration give a `KubeConfigError`;
 * TLS the runtime's `fetch` cannot make gives a `TlsUnsupportedError`. On
 * Node, Deno and Bun, `kube-reflector/kubeconfig` (`kubeconfig.ts`) does all
 * of those; its classes are the same as these.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectKubeConfig, KubeConfigError, parseKubeConfig } from "./kubeconfig_edge.ts";
 *
 * const text = `
 * current-context: prod
 * clusters: [{ name: prod, cluster: { server: "https://k8s.example.com" } }]
 * users: [{ name: ci, user: { tokenFile: /var/run/token } }]
 * contexts: [{ name: prod, context: { cluster: prod, user: ci } }]
 * `;
 * assert.deepEqual(parseKubeConfig(text).contextNames(), ["prod"]);
 * // A token file cannot be read at the edge: the error names the field.
 * await assert.rejects(connectKubeConfig(text), (err) =>
 *   err instanceof KubeConfigError && err.field === "users[ci].user.tokenFile");
 * ```
 *
 * @module
 */
export {
  connectKubeConfig,
  type ConnectKubeConfigOptions,
} from "./src/kubeconfig/connect_kube_config.ts";
export {
  parseKubeConfig,
  type ParseKubeConfigOptions,
} from "./src/kubeconfig/parse_kube_config.ts";
export { KubeConfig } from "./src/kubeconfig/kube_config.ts";
export { KubeConnection, type KubeConnectionInit } from "./src/kubeconfig/kube_connection.ts";
export { KubeConfigError, TlsUnsupportedError } from "./src/kubeconfig/kube_config_error.ts";
export type { TlsSettings } from "./src/kubeconfig/_resolve.ts";
export type { TlsFetch } from "./src/kubeconfig/_web_tls_fetch.ts";
export type { ContextEntry } from "./src/kubeconfig/_schema.ts";
