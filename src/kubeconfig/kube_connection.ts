import { KubeClient, type TokenProvider } from "../transport/kube_client.ts";
import type { TlsSettings } from "./_resolve.ts";
import { type TlsFetch, webTlsFetch } from "./_web_tls_fetch.ts";

/** What {@linkcode KubeConnection.open} needs. */
export interface KubeConnectionInit {
  /** The API server URL. */
  server: string;
  /** The namespace to default to. */
  namespace: string;
  /** TLS settings. */
  tls: TlsSettings;
  /** The bearer token source, if any. */
  token?: TokenProvider;
  /** Extra headers (basic auth). */
  headers?: HeadersInit;
  /** The kubeconfig context, cluster and user names (none in-cluster). */
  names?: { context?: string; cluster?: string; user?: string };
  /** The `User-Agent`. Default: KubeClient's. */
  userAgent?: string;
  /**
   * Makes the `fetch` that carries `tls`. Default: what the runtime offers
   * without extra packages (the global `fetch`; `Deno.createHttpClient`;
   * Bun's `tls` option), which throws a `TlsUnsupportedError` for custom
   * TLS on Node and at the edge. On Node pass `createTlsFetch` from
   * `kube-reflector/kubeconfig` (it loads undici), as its loaders do.
   */
  createFetch?: (tls: TlsSettings) => TlsFetch | Promise<TlsFetch>;
}

const inspectNode = Symbol.for("nodejs.util.inspect.custom");
const inspectDeno = Symbol.for("Deno.customInspect");

/**
 * A ready {@linkcode KubeClient} for a cluster, with the namespace to
 * default to and the TLS connection pool behind it. Call `close()` when
 * done: it releases the pool (Deno's `HttpClient`, undici's `Agent`).
 * Credentials stay private: `JSON.stringify` and `inspect` show names only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeConnection } from "./kube_connection.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start(); // e.g. `kubectl proxy` on http://127.0.0.1:8001
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "default" } });
 * const conn = await KubeConnection.open({ server: server.url, namespace: "default", tls: {} });
 * try {
 *   const res = await conn.client.request(`/api/v1/namespaces/${conn.namespace}/configmaps`);
 *   assert.equal((await res.json()).items.length, 1);
 *   assert.deepEqual(JSON.parse(JSON.stringify(conn)), { server: server.url, namespace: "default", via: "native" });
 * } finally {
 *   await conn.close();
 *   await server.close();
 * }
 * ```
 */
export class KubeConnection {
  /** The client, configured with the server, credentials and TLS. */
  readonly client: KubeClient;
  /** The context's namespace (`"default"` when unset), or the pod's namespace in-cluster. */
  readonly namespace: string;
  /** The API server URL. */
  readonly server: string;
  /** The kubeconfig context used (undefined in-cluster). */
  readonly context?: string;
  /** The kubeconfig cluster used. */
  readonly cluster?: string;
  /** The kubeconfig user used. */
  readonly user?: string;
  /** Which `fetch` implementation carries the TLS settings. */
  readonly via: TlsFetch["via"];
  #tls: TlsFetch;

  private constructor(init: KubeConnectionInit, tls: TlsFetch) {
    this.#tls = tls;
    this.server = init.server;
    this.namespace = init.namespace;
    this.context = init.names?.context;
    this.cluster = init.names?.cluster;
    this.user = init.names?.user;
    this.via = tls.via;
    this.client = new KubeClient({
      server: init.server,
      token: init.token,
      headers: init.headers,
      fetch: tls.fetch,
      userAgent: init.userAgent,
    });
  }

  /** Creates the TLS `fetch` (with `init.createFetch`) and the client. */
  static async open(init: KubeConnectionInit): Promise<KubeConnection> {
    const tls = await (init.createFetch ?? webTlsFetch)(init.tls);
    try {
      return new KubeConnection(init, tls);
    } catch (err) {
      await tls.close();
      throw err;
    }
  }

  /** Releases the connection pool. Requests still running are aborted. Idempotent. */
  close(): Promise<void> {
    return this.#tls.close();
  }

  /** What `JSON.stringify` shows: no credentials. */
  toJSON(): Record<string, string | undefined> {
    const { server, namespace, context, cluster, user, via } = this;
    return { server, namespace, context, cluster, user, via };
  }

  /** What Node's `util.inspect` (and `console.log`) shows: the `toJSON()` view, no credentials. */
  [inspectNode](): string {
    return `KubeConnection ${JSON.stringify(this.toJSON())}`;
  }

  /** What Deno's `Deno.inspect` (and `console.log`) shows: the `toJSON()` view, no credentials. */
  [inspectDeno](): string {
    return `KubeConnection ${JSON.stringify(this.toJSON())}`;
  }
}
