import assert from "node:assert/strict";
import { createTlsFetch, MissingPackageError } from "../../kubeconfig.ts";
import { runtime as testRuntime, test } from "../_test.ts";

const notFound = () =>
  Promise.reject(
    Object.assign(new Error("Cannot find package 'undici' imported from tls_fetch.js"), {
      code: "ERR_MODULE_NOT_FOUND",
    }),
  );

test("custom TLS on Node without undici installed rejects with a MissingPackageError naming the package and the install command", async () => {
  // Deno too, for what its own client cannot do (only where Deno.createHttpClient exists).
  for (const runtime of testRuntime === "deno" ? ["node", "deno"] as const : ["node"] as const) {
    const tls = runtime === "node"
      ? { ca: "pem", fields: { ca: "clusters[c].cluster.certificate-authority-data" } }
      : { insecure: true }; // what Deno's own client cannot do
    const err = await createTlsFetch(tls, { runtime, importUndici: notFound }).catch((e) => e);
    assert.ok(err instanceof MissingPackageError, String(err));
    assert.equal(err.packageName, "undici");
    assert.equal(err.install, "npm install undici@^7");
    assert.match(err.message, /needs the npm package "undici", which could not be loaded/);
    assert.match(
      err.message,
      runtime === "node"
        ? /custom TLS on Node \(clusters\[c\]/
        : /on Deno \(insecure-skip-tls-verify\)/,
    );
    assert.equal((err.cause as { code?: string }).code, "ERR_MODULE_NOT_FOUND");
    assert.ok(!err.message.includes("pem"));
  }
  // A module that is not undici (a wrong version, a stub) is refused the same way.
  const stub = await createTlsFetch({ insecure: true }, {
    runtime: "node",
    importUndici: () => Promise.resolve({}),
  }).catch((e) => e);
  assert.ok(stub instanceof MissingPackageError);
});

test("undici is imported only when custom TLS needs it", async () => {
  let imports = 0;
  const importUndici = () => {
    imports++;
    return notFound();
  };
  for (const runtime of ["node", "deno", "bun", "workerd"] as const) {
    const tls = await createTlsFetch({}, { runtime, importUndici });
    assert.equal(tls.via, "native");
    await tls.close();
  }
  const bun = await createTlsFetch({ ca: "pem" }, { runtime: "bun", importUndici });
  assert.equal(bun.via, "bun-tls");
  assert.equal(imports, 0);
  await createTlsFetch({ ca: "pem" }, { runtime: "node", importUndici }).catch(() => {});
  assert.equal(imports, 1);
});
