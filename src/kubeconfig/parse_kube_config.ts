import { parseKubeConfigText } from "./_schema.ts";
import { KubeConfig } from "./kube_config.ts";

/** Options of {@linkcode parseKubeConfig}. */
export interface ParseKubeConfigOptions {
  /** What errors call the text (a file name, a secret's name). Default: `"<kubeconfig text>"`. */
  name?: string;
}

/**
 * Parses a kubeconfig's text (YAML or JSON, as `kubectl config view --raw`
 * prints it) into a {@linkcode KubeConfig}, reading no file: for runtimes
 * without a file system (Cloudflare Workers, Vercel edge, Deno Deploy),
 * where the kubeconfig comes from a secret or an environment binding.
 * Throws a `KubeConfigError` naming the field (never a value) on malformed
 * YAML or a field of the wrong type.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseKubeConfig } from "./parse_kube_config.ts";
 *
 * const config = parseKubeConfig(`
 * apiVersion: v1
 * kind: Config
 * current-context: dev
 * clusters: [{ name: dev, cluster: { server: "https://dev.example.com" } }]
 * users: [{ name: me, user: { token: s3cr3t } }]
 * contexts: [{ name: dev, context: { cluster: dev, user: me, namespace: apps } }]
 * `);
 * assert.equal(config.currentContext, "dev");
 * assert.deepEqual(config.context("dev"), { cluster: "dev", user: "me", namespace: "apps" });
 * assert.ok(!JSON.stringify(config).includes("s3cr3t")); // credentials never show
 * ```
 */
export function parseKubeConfig(text: string, options: ParseKubeConfigOptions = {}): KubeConfig {
  const { name = "<kubeconfig text>" } = options;
  if (typeof text !== "string") throw new TypeError("parseKubeConfig: text must be a string");
  return KubeConfig.merge([parseKubeConfigText(text, name)]);
}
