import { connect } from "./_connect.ts";
import { resolveHttp2, resolveMaxStreams } from "./_http2_option.ts";
import { readText } from "./_node_fs.ts";
import { resolveContext } from "./_resolve.ts";
import { encodeBase64, processEnv } from "./_runtime.ts";
import { execCredentialProvider, type ExecStderr } from "./exec_credential_provider.ts";
import type { KubeConfig } from "./kube_config.ts";
import type { KubeConnection } from "./kube_connection.ts";
import { readKubeConfig, type ReadKubeConfigOptions } from "./read_kube_config.ts";
import { createTlsFetch } from "./tls_fetch.ts";
import { tokenFileProvider } from "./token_file_provider.ts";

/** Options of {@linkcode loadKubeConfig}. */
export interface LoadKubeConfigOptions extends ReadKubeConfigOptions {
  /** The context to use (kubectl's `--context`). Default: the `current-context`. */
  context?: string;
  /** An already read config (see `readKubeConfig`); `path`, `text` are then ignored. Default: read one. */
  config?: KubeConfig;
  /** Re-read a `tokenFile` when its token is older than this. Default: `60_000`. */
  tokenFileMaxAgeMs?: number;
  /**
   * Exec plugins' stderr: shown on this process's stderr (`"inherit"`, as
   * kubectl does), dropped (`"ignore"`), or handed to a function as text.
   * Default: `"inherit"`.
   */
  execStderr?: ExecStderr;
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
 * Loads a kubeconfig as kubectl does and returns a ready
 * {@linkcode KubeConnection}: a `KubeClient` with the server, credentials
 * (token, rotating `tokenFile`, client certificate, basic auth, exec plugin)
 * and a TLS-configured `fetch` for this runtime, plus the context's
 * namespace. Close it when done. Errors (`KubeConfigError`,
 * `TlsUnsupportedError`) name the file and field, never a secret.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadKubeConfig } from "./load_kube_config.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 * import { resourceListerWatcher } from "../../mod.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["s3cr3t"] });
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
 * // `path` reads one file (kubectl's --kubeconfig); with neither `path` nor `text`, KUBECONFIG or ~/.kube/config.
 * const conn = await loadKubeConfig({
 *   context: "dev", // kubectl's --context; default: the current-context
 *   text: JSON.stringify({
 *     clusters: [{ name: "dev", cluster: { server: server.url } }],
 *     users: [{ name: "me", user: { token: "s3cr3t" } }],
 *     contexts: [{ name: "dev", context: { cluster: "dev", user: "me", namespace: "apps" } }],
 *   }),
 * });
 * try {
 *   assert.equal(conn.namespace, "apps");
 *   const lw = resourceListerWatcher(conn.client, { apiVersion: "v1", resource: "configmaps", namespace: conn.namespace });
 *   const list = await lw.list({ limit: 10 });
 *   assert.deepEqual(list.items.map((o) => o.metadata?.name), ["a"]);
 * } finally {
 *   await conn.close();
 *   await server.close();
 * }
 * ```
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConnection> {
  const { context, tokenFileMaxAgeMs, execStderr, userAgent, env = processEnv() } = options;
  const http2 = resolveHttp2(options.http2, "loadKubeConfig");
  const maxStreamsPerConnection = resolveMaxStreams(
    options.maxStreamsPerConnection,
    "loadKubeConfig",
  );
  const config = options.config ?? (await readKubeConfig({ ...options, env: options.env }));
  const r = await resolveContext(config, context, env, readText);
  return await connect(r, {
    tokenFile: (auth) =>
      tokenFileProvider(auth.path, {
        maxAgeMs: tokenFileMaxAgeMs,
        file: auth.file,
        field: auth.field,
      }),
    exec: (auth, ca) => {
      const c = auth.cluster;
      const cluster = {
        server: c.server,
        "tls-server-name": c["tls-server-name"],
        "insecure-skip-tls-verify": c["insecure-skip-tls-verify"],
        "certificate-authority-data": ca ? encodeBase64(ca) : undefined,
      };
      return execCredentialProvider(auth.exec, {
        file: auth.file,
        field: auth.field,
        cluster,
        stderr: execStderr,
      });
    },
    createFetch: (tls) => createTlsFetch(tls, { http2, maxStreamsPerConnection }),
  }, userAgent);
}
