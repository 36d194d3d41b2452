import assert from "node:assert/strict";
import { createTlsFetch } from "../../kubeconfig.ts";
import { test } from "../_test.ts";
import { createPki } from "./_pki.ts";
import { startTlsServer } from "./_tls_server.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";

/** The error of a request to a server whose certificate is only for `kube.test`. */
async function mismatch(tls: { serverName?: string }): Promise<KubeNetworkError> {
  const pki = await createPki();
  const server = await startTlsServer(pki, { cert: pki.namedServer });
  const tlsFetch = await createTlsFetch({ ca: pki.ca.cert, ...tls });
  try {
    const client = new KubeClient({
      server: server.url,
      fetch: tlsFetch.fetch,
      token: "SECRET-token",
    });
    const err = await client
      .request("/api/v1/pods", { query: { SECRET: "query" } })
      .catch((e) => e);
    assert.ok(err instanceof KubeNetworkError, String(err));
    assert.equal(server.seen.length, 0);
    assert.ok(!err.message.includes("SECRET"), err.message);
    return err;
  } finally {
    await tlsFetch.close();
    await server.close();
    await pki.cleanup();
  }
}

test("a server whose certificate is for another name gives a KubeNetworkError naming the certificate's names", async () => {
  // Node (undici) and Deno (Deno.createHttpClient, rustls) alike.
  const err = await mismatch({});
  assert.equal(err.code, "ERR_TLS_CERT_ALTNAME_INVALID", err.message);
  assert.equal(
    err.message,
    "GET /api/v1/pods: network error: ERR_TLS_CERT_ALTNAME_INVALID (certificate is valid for kube.test, not 127.0.0.1)",
  );
});

test("with tls-server-name, a mismatch names the certificate's names and the name checked", async () => {
  // undici on both runtimes (Deno's own client cannot override the name).
  const err = await mismatch({ serverName: "other.test" });
  assert.equal(
    err.message,
    "GET /api/v1/pods: network error: ERR_TLS_CERT_ALTNAME_INVALID (certificate is valid for kube.test, not other.test)",
  );
});
