import { resolveHttp2, resolveMaxStreams } from "./_http2_option.ts";
import { checkCertificates } from "./_pem.ts";
import { readText } from "./_node_fs.ts";
import { processEnv } from "./_runtime.ts";
import { KubeConfigError } from "./kube_config_error.ts";
import { KubeConnection } from "./kube_connection.ts";
import { createTlsFetch } from "./tls_fetch.ts";
import { tokenFileProvider } from "./token_file_provider.ts";

/** The service account's folder in every pod. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Options of {@linkcode inClusterConfig}. */
export interface InClusterConfigOptions {
  /** The environment (`KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT`). Default: the process environment. */
  env?: Record<string, string | undefined>;
  /** The bearer token file. Default: `${SERVICE_ACCOUNT_DIR}/token`. */
  tokenPath?: string;
  /** The cluster CA file. Default: `${SERVICE_ACCOUNT_DIR}/ca.crt`. */
  caPath?: string;
  /** The pod's namespace file. Default: `${SERVICE_ACCOUNT_DIR}/namespace`. */
  namespacePath?: string;
  /** Re-read the token when older than this (projected tokens rotate). Default: `60_000`. */
  tokenMaxAgeMs?: number;
  /** The `User-Agent` header. Default: `"kube-reflector"`. */
  userAgent?: string;
  /**
   * Speak HTTP/2 where the API server offers it (ALPN; HTTP/1.1 otherwise):
   * many watches share one connection, up to the server's
   * `maxConcurrentStreams`, another connection opening beyond it. On Node
   * with TLS through undici; on Deno with TLS through `Deno.createHttpClient`.
   * `false`: HTTP/1.1 only, one connection per watch. Plain HTTP (`kubectl
   * proxy`), Bun and edge runtimes use their `fetch` as it is. Default: `true`.
   */
  http2?: boolean;
  /**
   * At most this many requests (watches included) in flight on one HTTP/2
   * connection; past it another connection opens rather than a request
   * waiting. On Deno (TLS through `Deno.createHttpClient`), whose client
   * cannot learn the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, this is
   * the budget: keep it at or below the server's limit. On Node the
   * server's advertised limit applies, capped by this when given. A whole
   * number >= 1 (`RangeError` otherwise; `TypeError` for a non-number).
   * Default: 100 on Deno (kube-apiserver's own default limit since its
   * HTTP/2 hardening; older ones allow 250); the server's limit on Node.
   */
  maxStreamsPerConnection?: number;
}

/**
 * The configuration of a program running in a pod, as client-go's
 * `rest.InClusterConfig`: the server from `KUBERNETES_SERVICE_HOST` and
 * `KUBERNETES_SERVICE_PORT`, the service-account token (re-read at least
 * every minute and at once after a 401, so projected-token rotation is
 * picked up), the cluster CA, and the pod's namespace (`"default"` if the
 * file is missing). Returns a ready {@linkcode KubeConnection}; close it
 * when done. Errors name the variable or file, never the token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 * import { inClusterConfig } from "./in_cluster_config.ts";
 *
 * // In a pod: `await inClusterConfig()`, with the files under SERVICE_ACCOUNT_DIR.
 * const dir = await Deno.makeTempDir();
 * try {
 *   await Deno.writeTextFile(join(dir, "token"), "s3cr3t\n");
 *   await Deno.writeTextFile(join(dir, "namespace"), "apps\n");
 *   await Deno.writeTextFile(
 *     join(dir, "ca.crt"),
 *     "-----BEGIN CERTIFICATE-----\n" +
 *     "MIIBQDCB86ADAgECAhR7TdEPjUvgpHSby7U457NKHDhW3jAFBgMrZXAwFTETMBEG\n" +
 *     "A1UEAwwKZXhhbXBsZS1jYTAgFw0yNjEyMDMxNTIyNDVaGA8yMTI2MTEwOTE1MjI0\n" +
 *     "NVowFTETMBEGA1UEAwwKZXhhbXBsZS1jYTAqMAUGAytlcAMhABpJTsAJ4G+GQxM5\n" +
 *     "3Q7cAlrrzBItMuMoUtRZgE8+QzwTo1MwUTAdBgNVHQ4EFgQURdtZ1TaSm+FArHIW\n" +
 *     "Pk4oO/kmXNAwHwYDVR0jBBgwFoAURdtZ1TaSm+FArHIWPk4oO/kmXNAwDwYDVR0T\n" +
 *     "AQH/BAUwAwEB/zAFBgMrZXADQQACcEGaKGn/wKhsdhMVgjhNQ03Cvsuowsa0pdRG\n" +
 *     "UGNoLv+QnrpXeq4xQZ4MPDO5e1OEnMAx1nGwXAwkSrIvXcoI\n" +
 *     "-----END CERTIFICATE-----\n",
 *   );
 *   const conn = await inClusterConfig({
 *     env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
 *     tokenPath: join(dir, "token"),
 *     caPath: join(dir, "ca.crt"),
 *     namespacePath: join(dir, "namespace"),
 *   });
 *   try {
 *     assert.equal(conn.server, "https://10.96.0.1:443");
 *     assert.equal(conn.namespace, "apps");
 *     assert.ok(!JSON.stringify(conn).includes("s3cr3t")); // the token never shows
 *   } finally {
 *     await conn.close();
 *   }
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export async function inClusterConfig(
  options: InClusterConfigOptions = {},
): Promise<KubeConnection> {
  const {
    env = processEnv(),
    tokenPath = `${SERVICE_ACCOUNT_DIR}/token`,
    caPath = `${SERVICE_ACCOUNT_DIR}/ca.crt`,
    namespacePath = `${SERVICE_ACCOUNT_DIR}/namespace`,
    tokenMaxAgeMs = 60_000,
    userAgent,
  } = options;
  const http2 = resolveHttp2(options.http2, "inClusterConfig");
  const maxStreamsPerConnection = resolveMaxStreams(
    options.maxStreamsPerConnection,
    "inClusterConfig",
  );
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) {
    throw new KubeConfigError(
      "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set",
      {
        field: !host ? "KUBERNETES_SERVICE_HOST" : "KUBERNETES_SERVICE_PORT",
      },
    );
  }
  const server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  try {
    new URL(server);
  } catch {
    throw new KubeConfigError("do not form a URL", {
      field: "KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT",
    });
  }
  const ca = await readText(caPath);
  checkCertificates(ca, { file: caPath, field: "ca.crt" });
  const token = tokenFileProvider(tokenPath, { maxAgeMs: tokenMaxAgeMs });
  await token({ refresh: false }); // fail now, clearly, when the token is missing
  let namespace = "default";
  try {
    namespace = (await readText(namespacePath)).trim() || "default";
  } catch {
    // client-go falls back to "default" as well
  }
  return await KubeConnection.open({
    server,
    namespace,
    tls: { ca, fields: { ca: caPath } },
    token,
    userAgent,
    createFetch: (tls) => createTlsFetch(tls, { http2, maxStreamsPerConnection }),
  });
}
