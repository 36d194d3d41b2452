import { connect } from "./_connect.ts";
import { resolveHttp2, resolveMaxStreams } from "./_http2_option.ts";
import { runtimeName } from "./_runtime.ts";
import { webTlsFetch } from "./_web_tls_fetch.ts";
import { resolveContext } from "./_resolve.ts";
import { KubeConfig } from "./kube_config.ts";
import type { KubeConnection } from "./kube_connection.ts";
import { parseKubeConfig } from "./parse_kube_config.ts";

/** Options of {@linkcode connectKubeConfig}. */
export interface ConnectKubeConfigOptions {
  /** The context to use (kubectl's `--context`). Default: the `current-context`. */
  context?: string;
  /** What errors call the kubeconfig text. Default: `"<kubeconfig text>"`. */
  name?: string;
  /** The `User-Agent` header. Default: `"kube-reflector"`. */
  userAgent?: string;
  /**
   * Speak HTTP/2 where the API server offers it (on Deno with TLS, through
   * `Deno.createHttpClient`); `false`: HTTP/1.1 only. Elsewhere the
   * runtime's `fetch` serves as it is. Default: `true`.
   */
  http2?: boolean;
  /**
   * At most this many requests (watches included) in flight on one HTTP/2
   * connection (Deno with TLS, through `Deno.createHttpClient`, whose client
   * cannot learn the server's `SETTINGS_MAX_CONCURRENT_STREAMS`): past it
   * another connection opens rather than a request waiting; keep it at or
   * below the server's limit. A whole number >= 1 (`RangeError` otherwise;
   * `TypeError` for a non-number). Default: 100 (kube-apiserver's own
   * default limit since its HTTP/2 hardening; older ones allow 250).
   */
  maxStreamsPerConnection?: number;
}

/**
 * Connects with a kubeconfig given as text (or already parsed), on any
 * runtime, edge included: it reads no file, runs no process and loads no
 * package beyond the YAML parser. The context's server, namespace and
 * inline credentials (`token`, `username`/`password`; on Deno and Bun also
 * `certificate-authority-data` and `client-certificate-data`/`client-key-data`)
 * make a ready {@linkcode KubeConnection}; close it when done.
 *
 * What needs more fails with a clear error naming the field: a file path
 * (`certificate-authority`, `tokenFile`...) or an exec plugin gives a
 * `KubeConfigError`; custom TLS that the runtime's `fetch` cannot do (at
 * the edge; on Node, where it needs undici) gives a `TlsUnsupportedError`.
 * `loadKubeConfig` from `kube-reflector/kubeconfig` does all of those on
 * Node, Deno and Bun.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { connectKubeConfig } from "./connect_kube_config.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 * import { Indexer, metaNamespaceKeyFunc, Reflector, resourceListerWatcher } from "../../mod.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["s3cr3t"], streamingList: true });
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
 * // On the edge the text comes from a secret binding, e.g. env.KUBECONFIG.
 * const text = JSON.stringify({
 *   "current-context": "dev",
 *   clusters: [{ name: "dev", cluster: { server: server.url } }],
 *   users: [{ name: "me", user: { token: "s3cr3t" } }],
 *   contexts: [{ name: "dev", context: { cluster: "dev", user: "me", namespace: "apps" } }],
 * });
 * const conn = await connectKubeConfig(text);
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
 */
export async function connectKubeConfig(
  kubeconfig: string | KubeConfig,
  options: ConnectKubeConfigOptions = {},
): Promise<KubeConnection> {
  const { context, name, userAgent } = options;
  const http2 = resolveHttp2(options.http2, "connectKubeConfig");
  const maxStreamsPerConnection = resolveMaxStreams(
    options.maxStreamsPerConnection,
    "connectKubeConfig",
  );
  const config = kubeconfig instanceof KubeConfig
    ? kubeconfig
    : parseKubeConfig(kubeconfig, { name });
  const r = await resolveContext(config, context, {});
  return await connect(
    r,
    {
      createFetch: (tls) => webTlsFetch(tls, runtimeName(), { http2, maxStreamsPerConnection }),
    },
    userAgent,
  );
}
