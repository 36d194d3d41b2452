/**
 * An answer with a GOAWAY right behind it (Go's server on a graceful
 * shutdown, or kube-apiserver's `--goaway-chance`, sends the GOAWAY after
 * the headers): undici closes the connection on any GOAWAY and fails the
 * body it had not handed on. Node with h2 only (Deno's client keeps its
 * open streams, and HTTP/1.1 has no GOAWAY).
 */
import assert from "node:assert/strict";
import { constants, createSecureServer, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";
import { createTlsFetch } from "../../kubeconfig.ts";
import { KubeClient } from "../../mod.ts";
import { runtime, test } from "../_test.ts";
import { createPki } from "./_pki.ts";

/** A TLS server (h2, HTTP/1.1 allowed) answering every GET `{"n":N}`, each h2 answer followed by a GOAWAY; `/hold` waits for `release()`. */
async function goAwayServer(pki: { server: { cert: string; key: string } }) {
  const sessions = new Set<Http2Session>();
  let n = 0;
  const seen: string[] = [];
  const held: (() => void)[] = [];
  let released = false;
  const server = createSecureServer(
    { cert: pki.server.cert, key: pki.server.key, allowHTTP1: true },
    (req, res) => {
      seen.push(`${req.httpVersion} ${req.url}`);
      const answer = () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ n: ++n }));
        const stream = (res as unknown as { stream?: { id: number; session?: Http2Session } })
          .stream;
        // NO_ERROR, the last stream id taken: every stream already opened is still answered
        if (stream?.session) {
          stream.session.goaway(constants.NGHTTP2_NO_ERROR, Math.max(stream.id, ...lastIds));
        }
      };
      if (req.url?.startsWith("/hold") && !released) held.push(answer);
      else answer();
    },
  );
  const lastIds: number[] = [];
  server.on("stream", (s) => lastIds.push(s.id ?? 0));
  server.on("session", (s: Http2Session) => {
    sessions.add(s);
    s.on("error", () => {});
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    held,
    /** Answers every held request, and every later one at once. */
    release() {
      released = true;
      for (const answer of held.splice(0)) answer();
    },
    async close() {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test("a GET answered with a GOAWAY right behind it reaches requestJson whole (resumed once over HTTP/1.1)", async () => {
  if (runtime !== "node") return;
  const pki = await createPki();
  const server = await goAwayServer(pki);
  const tls = await createTlsFetch({ ca: pki.ca.cert }, { runtime: "node" });
  try {
    const client = new KubeClient({ server: server.url, fetch: tls.fetch });
    for (let i = 0; i < 3; i++) {
      const got = await client.requestJson<{ n: number }>("/api/v1/namespaces/a/configmaps/a");
      assert.equal(typeof got.n, "number");
    }
    assert.ok(server.seen.some((s) => s.startsWith("2.0")), server.seen.join(", "));
  } finally {
    await tls.close();
    await server.close();
    await pki.cleanup();
  }
});

test("three GETs in flight when a graceful GOAWAY covering all three comes behind the first answer: all three are answered", async () => {
  if (runtime !== "node") return;
  const pki = await createPki();
  const server = await goAwayServer(pki);
  const tls = await createTlsFetch({ ca: pki.ca.cert }, { runtime: "node" });
  try {
    const outcomes = [0, 1, 2].map((i) =>
      tls.fetch(`${server.url}/hold${i}`).then(
        async (res) => `${res.status} ${(await res.json() as { n: number }).n > 0}`,
        (e: Error) => `${e.name}: ${e.message}`,
      )
    );
    for (let i = 0; i < 2_000 && server.held.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(server.held.length, 3);
    server.release();
    assert.deepEqual(await Promise.all(outcomes), ["200 true", "200 true", "200 true"]);
  } finally {
    await tls.close();
    await server.close();
    await pki.cleanup();
  }
});
