/**
 * A resolved context to a ready {@linkcode KubeConnection}: the credential
 * (inline token or basic auth here; token files and exec plugins through
 * the loaders the caller passes) and the TLS `fetch`. Shared by both entry
 * points; the edge-safe one passes no loaders, and a context that needs
 * one fails with an error naming the field.
 *
 * @module
 */
import type { TokenProvider } from "../transport/kube_client.ts";
import type { AuthSource, ResolvedContext, TlsSettings } from "./_resolve.ts";
import { EDGE_FILE_HINT } from "./_resolve.ts";
import { encodeBase64 } from "./_runtime.ts";
import type { TlsFetch } from "./_web_tls_fetch.ts";
import { KubeConfigError } from "./kube_config_error.ts";
import { KubeConnection } from "./kube_connection.ts";

/** The credential sources only the Node-capable entry point has. */
export interface Loaders {
  /** A provider re-reading a `tokenFile`. */
  tokenFile?: (auth: Extract<AuthSource, { kind: "tokenFile" }>) => TokenProvider;
  /** A provider running an exec plugin; `ca` is the cluster's CA (PEM), for `KUBERNETES_EXEC_INFO`. */
  exec?: (auth: Extract<AuthSource, { kind: "exec" }>, ca: string | undefined) => TokenProvider;
  /** Makes the TLS `fetch`. Default: the runtime's own means only. */
  createFetch?: (tls: TlsSettings) => TlsFetch | Promise<TlsFetch>;
}

/** Opens a connection for the resolved context `r`. */
export async function connect(
  r: ResolvedContext,
  loaders: Loaders,
  userAgent: string | undefined,
): Promise<KubeConnection> {
  let token: TokenProvider | undefined;
  let headers: Record<string, string> | undefined;
  const auth = r.auth;
  switch (auth.kind) {
    case "token": {
      const t = auth.token;
      token = () => t;
      break;
    }
    case "tokenFile":
      if (!loaders.tokenFile) {
        throw new KubeConfigError(`names a token file: inline it as token; ${EDGE_FILE_HINT}`, {
          file: auth.file,
          field: auth.field,
        });
      }
      token = loaders.tokenFile(auth);
      break;
    case "basic":
      headers = { authorization: `Basic ${encodeBase64(`${auth.username}:${auth.password}`)}` };
      break;
    case "exec":
      if (!loaders.exec) {
        throw new KubeConfigError(
          "is an exec credential plugin, which kube-reflector/kubeconfig/edge cannot run " +
            "(no processes at the edge): inline a token, or use kube-reflector/kubeconfig",
          { file: auth.file, field: auth.field },
        );
      }
      token = loaders.exec(auth, r.tls.ca);
      break;
  }
  return await KubeConnection.open({
    server: r.server,
    namespace: r.namespace,
    tls: r.tls,
    token,
    headers,
    names: { context: r.context, cluster: r.cluster, user: r.user || undefined },
    userAgent,
    createFetch: loaders.createFetch,
  });
}
