import assert from "node:assert/strict";
import { inspect } from "node:util";
import { createTlsFetch, KubeConfigError, TlsUnsupportedError } from "../../kubeconfig.ts";
import { runtime, test } from "../_test.ts";
import { createPki, pemBody } from "./_pki.ts";

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
