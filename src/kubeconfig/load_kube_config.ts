import type { TokenProvider } from "../transport/kube_client.ts";
import { resolveContext } from "./_resolve.ts";
import { encodeBase64, processEnv } from "./_runtime.ts";
import { execCredentialProvider, type ExecStderr } from "./exec_credential_provider.ts";
import type { KubeConfig } from "./kube_config.ts";
import { KubeConnection } from "./kube_connection.ts";
import { readKubeConfig, type ReadKubeConfigOptions } from "./read_kube_config.ts";
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
 * import { loadKubeConfig } from "./load_kube_config.ts";
 * import { resourceListerWatcher } from "../../mod.ts";
 * const conn = await loadKubeConfig({ context: "kind-dev" });
 * try {
 *   const lw = resourceListerWatcher(conn.client, { apiVersion: "v1", resource: "configmaps", namespace: conn.namespace });
 *   console.log((await lw.list({ limit: 10 })).items.length);
 * } finally {
 *   await conn.close();
 * }
 * ```
 */
export async function loadKubeConfig(options: LoadKubeConfigOptions = {}): Promise<KubeConnection> {
  const { context, tokenFileMaxAgeMs, execStderr, userAgent, env = processEnv() } = options;
  const config = options.config ?? (await readKubeConfig({ ...options, env }));
  const r = await resolveContext(config, context, env);
  let token: TokenProvider | undefined;
  let headers: HeadersInit | undefined;
  const auth = r.auth;
  switch (auth.kind) {
    case "token": {
      const t = auth.token;
      token = () => t;
      break;
    }
    case "tokenFile":
      token = tokenFileProvider(auth.path, {
        maxAgeMs: tokenFileMaxAgeMs,
        file: auth.file,
        field: auth.field,
      });
      break;
    case "basic":
      headers = { authorization: `Basic ${encodeBase64(`${auth.username}:${auth.password}`)}` };
      break;
    case "exec": {
      const c = auth.cluster;
      const cluster = {
        server: c.server,
        "tls-server-name": c["tls-server-name"],
        "insecure-skip-tls-verify": c["insecure-skip-tls-verify"],
        "certificate-authority-data": r.tls.ca ? encodeBase64(r.tls.ca) : undefined,
      };
      token = execCredentialProvider(auth.exec, {
        file: auth.file,
        field: auth.field,
        cluster,
        stderr: execStderr,
      });
      break;
    }
  }
  return await KubeConnection.open({
    server: r.server,
    namespace: r.namespace,
    tls: r.tls,
    token,
    headers,
    names: { context: r.context, cluster: r.cluster, user: r.user || undefined },
    userAgent,
  });
}
