import assert from "node:assert/strict";
import { inspect } from "node:util";
import { createTlsFetch, KubeConfigError, TlsUnsupportedError } from "../../kubeconfig.ts";
import { runtime, test } from "../_test.ts";
import { createExpiredServer, createPki, createSelfSignedServer, pemBody } from "./_pki.ts";
import { startTlsServer } from "./_tls_server.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";

test("an edge runtime asked for a custom CA or client certificate gets a TlsUnsupportedError naming the fields", async () => {
  const err = await createTlsFetch(
    {
      ca: "pem",
      cert: "pem",
      key: "pem",
      fields: { ca: "clusters[c].cluster.certificate-authority-data" },
    },
    { runtime: "workerd" },
  ).catch((e) => e);
  assert.ok(err instanceof TlsUnsupportedError);
  assert.equal(err.runtime, "workerd");
  assert.deepEqual(err.needs, [
    "clusters[c].cluster.certificate-authority-data",
    "client-certificate",
    "client-key",
  ]);
  assert.match(err.message, /workerd.*certificate-authority-data, client-certificate, client-key/);
  assert.ok(!err.message.includes("pem"));
});

test("an edge runtime with no custom TLS needs gets the global fetch", async () => {
  const tls = await createTlsFetch({}, { runtime: "edge-runtime" });
  assert.equal(tls.via, "native");
  await tls.close();
  await assert.rejects(
    createTlsFetch({ insecure: true }, { runtime: "unknown" }),
    TlsUnsupportedError,
  );
});

test("a key the TLS client cannot use gives a KubeConfigError naming the fields, not the material", async () => {
  const pki = await createPki();
  try {
    // a certificate relabelled as a key: well-formed PEM, unusable as a key
    const key = pki.client.cert.replaceAll("CERTIFICATE", "PRIVATE KEY");
    const fields = {
      cert: "users[me].user.client-certificate-data",
      key: "users[me].user.client-key-data",
    };
    const err = await (async () => {
      const tls = await createTlsFetch({ ca: pki.ca.cert, cert: pki.client.cert, key, fields });
      try {
        // runtimes that only load the key at connect time fail here instead
        await tls.fetch("https://127.0.0.1:9/");
      } finally {
        await tls.close();
      }
    })().catch((e) => e);
    assert.ok(err instanceof Error, String(err));
    const shown = inspect(err, { depth: 10 });
    for (const line of pemBody(pki.client.cert)) {
      assert.ok(!shown.includes(line), "no key material in the error");
    }
    if (runtime === "deno") {
      assert.ok(err instanceof KubeConfigError, String(err));
      assert.match(err.message, /client-key-data/);
    }
  } finally {
    await pki.cleanup();
  }
});

test("a server with a self-signed certificate gives a KubeNetworkError naming the certificate problem", async () => {
  const pki = await createPki();
  const server = await startTlsServer(pki, { cert: await createSelfSignedServer(pki) });
  try {
    const client = new KubeClient({ server: server.url, token: "SECRET-token" });
    const err = await client
      .request("/api/v1/pods", { query: { SECRET: "query" } })
      .catch((e) => e);
    assert.ok(err instanceof KubeNetworkError, String(err));
    // Node and Bun say "self-signed"; Deno's TLS (rustls) says "unknown issuer".
    assert.ok(
      ["DEPTH_ZERO_SELF_SIGNED_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY"].includes(err.code!),
      err.message,
    );
    assert.match(err.message, /^GET \/api\/v1\/pods: network error: [A-Z_]+ \(.*certificate.*\)$/);
    assert.ok(!err.message.includes("SECRET"), err.message);
    assert.equal(server.seen.length, 0);
  } finally {
    await server.close();
    await pki.cleanup();
  }
});

test("a server with an expired certificate gives a KubeNetworkError saying it has expired", async () => {
  const pki = await createPki();
  const server = await startTlsServer(pki, { cert: await createExpiredServer(pki) });
  const tls = await createTlsFetch({ ca: pki.ca.cert });
  try {
    const client = new KubeClient({ server: server.url, fetch: tls.fetch, token: "SECRET-token" });
    const err = await client
      .request("/api/v1/pods", { query: { watch: "1", SECRET: "query" } })
      .catch((e) => e);
    assert.ok(err instanceof KubeNetworkError, String(err));
    assert.equal(err.code, "CERT_HAS_EXPIRED", err.message);
    assert.equal(
      err.message,
      "GET /api/v1/pods: network error: CERT_HAS_EXPIRED (certificate has expired)",
    );
    assert.equal(server.seen.length, 0);
  } finally {
    await tls.close();
    await server.close();
    await pki.cleanup();
  }
});
