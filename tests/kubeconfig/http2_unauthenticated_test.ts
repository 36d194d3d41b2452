/**
 * HTTP/2 on Node: a server that answers a request and closes the connection
 * with a GOAWAY right behind the answer, as kube-apiserver 1.29+ does for
 * every unauthenticated request (a revoked or rotated token). undici fails
 * such a request on h2 even though it was answered; kube-reflector sends a
 * GET again once over HTTP/1.1, so the 401 arrives and the client refreshes
 * its token. Node only: on Deno a TLS kubeconfig goes through
 * Deno.createHttpClient, which lets answered streams finish.
 */
import assert from "node:assert/strict";
import { createSecureServer, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { createTlsFetch } from "../../kubeconfig.ts";
import { KubeClient } from "../../mod.ts";
import { runtime, test } from "../_test.ts";
import { createPki } from "./_pki.ts";

if (runtime === "node") {
  test("a 401 answered with a GOAWAY behind it (kube-apiserver 1.29+) reaches the client, which refreshes its token", async () => {
    const pki = await createPki();
    const seen: string[] = [];
    const status = (code: number) =>
      JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code });
    const server = createSecureServer({
      cert: pki.server.cert,
      key: pki.server.key,
      allowHTTP1: true,
    }, (req, res) => {
      const ok = req.headers.authorization === "Bearer new";
      seen.push(`${req.httpVersion} ${ok ? "new" : "old"}`);
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      if (ok) {
        res.end(
          JSON.stringify({ kind: "ConfigMapList", apiVersion: "v1", metadata: {}, items: [] }),
        );
        return;
      }
      res.end(status(401));
      // As kube-apiserver's UnauthenticatedHTTP2DOSMitigation: close the connection behind the answer.
      const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
      stream?.session?.goaway(0, stream.id);
      if (!stream) res.socket?.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tls = await createTlsFetch({ ca: pki.ca.cert }, { runtime: "node" });
    let token = "old";
    const client = new KubeClient({
      server: url,
      fetch: tls.fetch,
      token: ({ refresh }) => Promise.resolve(refresh ? (token = "new") : token),
    });
    try {
      const list = await client.requestJson<{ kind: string }>("/api/v1/configmaps");
      assert.equal(list.kind, "ConfigMapList");
      // The old token's 401 arrived (over HTTP/1.1 when h2 lost it), then the refreshed token worked.
      assert.ok(seen.some((s) => s.endsWith(" old")), seen.join(", "));
      assert.equal(seen.at(-1)?.endsWith(" new"), true, seen.join(", "));
    } finally {
      await tls.close();
      // Not awaited: the http2 server's close callback waits for a session that ended by GOAWAY.
      server.close();
      await pki.cleanup();
    }
  });
}
