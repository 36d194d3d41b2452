/**
 * A TLS FakeApiServer (h2 or HTTP/1.1 only) and a kubeconfig-built
 * connection trusting its CA, for the HTTP/2 tests; and informers over it.
 *
 * @module
 */
import { loadKubeConfig } from "../../kubeconfig.ts";
import { Informer, type KubeObject, resourceListerWatcher } from "../../mod.ts";
import type { KubeConnection } from "../../src/kubeconfig/kube_connection.ts";
import { FakeApiServer, type FakeApiServerOptions } from "../../testkit.ts";
import { b64 } from "./_helpers.ts";
import { createPki, type Pki } from "./_pki.ts";

/** A running fixture. */
export interface H2Fixture {
  pki: Pki;
  server: FakeApiServer;
  conn: KubeConnection;
  /** Starts an informer on ConfigMaps in `namespace`; resolves once synced. */
  informer(namespace: string): Promise<Informer<KubeObject>>;
  close(): Promise<void>;
}

/** Starts the server (`tls` added to `serverOptions`) and connects with `http2`, `maxStreamsPerConnection` (client side). */
export async function h2Fixture(
  serverOptions: FakeApiServerOptions = {},
  clientOptions: { http2?: boolean; maxStreamsPerConnection?: number } = {},
): Promise<H2Fixture> {
  const pki = await createPki();
  const server = await FakeApiServer.start({
    ...serverOptions,
    tls: { cert: pki.server.cert, key: pki.server.key },
  });
  const conn = await loadKubeConfig({
    text: JSON.stringify({
      "current-context": "t",
      clusters: [{
        name: "c",
        cluster: { server: server.url, "certificate-authority-data": b64(pki.ca.cert) },
      }],
      users: [{ name: "u", user: { token: "t0k" } }],
      contexts: [{ name: "t", context: { cluster: "c", user: "u" } }],
    }),
    http2: clientOptions.http2,
    maxStreamsPerConnection: clientOptions.maxStreamsPerConnection,
  });
  const ac = new AbortController();
  const runs: Promise<void>[] = [];
  return {
    pki,
    server,
    conn,
    async informer(namespace) {
      const lw = resourceListerWatcher(conn.client, {
        apiVersion: "v1",
        resource: "configmaps",
        namespace,
      });
      const informer = new Informer(lw, {
        name: namespace,
        expectedKind: "ConfigMap",
        backoff: { initialMs: 5, capMs: 50 },
      });
      runs.push(informer.run({ signal: ac.signal }));
      await informer.waitForSync();
      return informer;
    },
    async close() {
      ac.abort();
      await Promise.all(runs);
      await conn.close();
      await server.close();
      await pki.cleanup();
    },
  };
}

/** A ConfigMap. */
export function cm(namespace: string, name: string, data: Record<string, string> = {}): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data } as KubeObject;
}

/** Polls `condition` every few ms until it holds; throws after `ms` (a guard, not a timing assert). */
export async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
