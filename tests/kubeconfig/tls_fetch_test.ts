import assert from "node:assert/strict";
import { createTlsFetch, TlsUnsupportedError } from "../../kubeconfig.ts";
import { test } from "../_test.ts";

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
