import assert from "node:assert/strict";
import { test } from "../_test.ts";
import { KubeNetworkError } from "../../src/api/errors.ts";
import { KubeClient } from "../../src/transport/kube_client.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { startHttpServer } from "./_http_server.ts";

/** The KubeNetworkError of a request whose `fetch` throws `thrown`. */
async function errorOf(thrown: unknown): Promise<KubeNetworkError> {
  const client = new KubeClient({
    server: "https://kube.example:6443",
    token: "SECRET-token",
    fetch: () => Promise.reject(thrown),
  });
  const err = await client.request("/api/v1/pods", { query: { SECRET: "q" } }).catch((e) => e);
  assert.ok(err instanceof KubeNetworkError, String(err));
  assert.ok(!/SECRET|pw|hunter2/.test(err.message), err.message);
  return err;
}

function causing(cause: unknown): TypeError {
  return new TypeError("fetch failed", { cause });
}

/** What undici (Node) and Bun throw when a name does not resolve. */
function nodeDnsError(code: string, hostname: string): Error {
  return Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), {
    code,
    errno: -3008,
    syscall: "getaddrinfo",
    hostname,
  });
}

/** What Deno's fetch throws: the message quotes the whole URL. */
function denoError(detail: string): TypeError {
  return causing(
    new Error(
      `error sending request for url (https://user:pw@kube.example:6443/api/v1/pods?token=hunter2): client error (Connect): ${detail}`,
    ),
  );
}

test("DNS failures name the host from what each runtime gives, never the URL's credentials or query", async () => {
  const node = await errorOf(causing(nodeDnsError("ENOTFOUND", "kube.example")));
  assert.equal(
    node.message,
    "GET /api/v1/pods: network error: ENOTFOUND kube.example (host not found)",
  );
  const bun = await errorOf(nodeDnsError("EAI_AGAIN", "kube.example"));
  assert.equal(
    bun.message,
    "GET /api/v1/pods: network error: EAI_AGAIN kube.example (temporary DNS failure)",
  );
  const deno = await errorOf(
    denoError("dns error: failed to lookup address information: Name or service not known"),
  );
  assert.equal(deno.code, "ENOTFOUND");
  assert.equal(
    deno.message,
    "GET /api/v1/pods: network error: ENOTFOUND kube.example (host not found)",
  );
  const denoAgain = await errorOf(
    denoError(
      "dns error: failed to lookup address information: Temporary failure in name resolution",
    ),
  );
  assert.equal(
    denoAgain.message,
    "GET /api/v1/pods: network error: EAI_AGAIN kube.example (temporary DNS failure)",
  );
  // a host name that is not one is left out rather than quoted
  const odd = await errorOf(causing(nodeDnsError("ENOTFOUND", "Bearer hunter2")));
  assert.equal(odd.message, "GET /api/v1/pods: network error: ENOTFOUND (host not found)");
});

test("a certificate issued for other names lists them as kubectl does, from Node's and Deno's errors", async () => {
  const node = await errorOf(
    causing(
      Object.assign(new Error("Hostname/IP does not match certificate's altnames: ..."), {
        code: "ERR_TLS_CERT_ALTNAME_INVALID",
        reason: "IP: 10.0.0.9 is not in the cert's list: 10.0.0.1",
        host: "10.0.0.9",
        cert: { subjectaltname: "DNS:kube.test, DNS:*.kube.test, IP Address:10.0.0.1" },
      }),
    ),
  );
  assert.equal(node.code, "ERR_TLS_CERT_ALTNAME_INVALID");
  assert.equal(
    node.message,
    "GET /api/v1/pods: network error: ERR_TLS_CERT_ALTNAME_INVALID (certificate is valid for kube.test, *.kube.test, 10.0.0.1, not 10.0.0.9)",
  );
  const deno = await errorOf(
    denoError(
      'invalid peer certificate: certificate not valid for name "10.0.0.9"; certificate is only valid for DnsName("kube.test"), DnsName("*.kube.test") or IpAddress(10.0.0.1)',
    ),
  );
  assert.equal(deno.code, "ERR_TLS_CERT_ALTNAME_INVALID");
  assert.equal(deno.message, node.message);
  const none = await errorOf(
    denoError(
      'invalid peer certificate: certificate not valid for name "kube.example"; certificate is not valid for any names (according to its subjectAltName extension)',
    ),
  );
  assert.equal(
    none.message,
    "GET /api/v1/pods: network error: ERR_TLS_CERT_ALTNAME_INVALID (certificate is not valid for any names, but wanted to match kube.example)",
  );
});

test("certificate names that are not host names are left out, and a long list is cut", async () => {
  const many = Array.from({ length: 12 }, (_, i) => `DNS:n${i}.test`);
  const err = await errorOf(
    causing(
      Object.assign(new Error("altnames"), {
        code: "ERR_TLS_CERT_ALTNAME_INVALID",
        host: "kube.example",
        cert: {
          subjectaltname: [
            'DNS:"quoted" name',
            "URI:spiffe://cluster/ns/x",
            "email:a@b.test",
            ...many,
          ].join(", "),
        },
      }),
    ),
  );
  assert.equal(
    err.message,
    "GET /api/v1/pods: network error: ERR_TLS_CERT_ALTNAME_INVALID (certificate is valid for n0.test, n1.test, n2.test, n3.test, n4.test, n5.test, n6.test, n7.test, and 4 more, not kube.example)",
  );
});

test("requestJson: a body cut off by the network is a KubeNetworkError, not a JSON error; bad JSON stays a KubeStatusError", async () => {
  const server = await startHttpServer((req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url?.startsWith("/cut")) {
      // Half an object, then the connection dies (a reset, an HTTP/2 GOAWAY mid-body).
      res.write('{"kind":"ConfigMap","metadata":{"na');
      setTimeout(() => res.socket?.destroy(), 5);
      return;
    }
    res.end("{not json");
  });
  const client = new KubeClient({ server: server.url, token: "SECRET-token" });
  try {
    const cut = await client.requestJson("/cut").catch((e) => e);
    assert.ok(cut instanceof KubeNetworkError, String(cut));
    assert.equal(cut.request, "GET /cut");
    assert.ok(!/SECRET/.test(cut.message), cut.message);
    const bad = await client.requestJson("/bad").catch((e) => e);
    assert.ok(bad instanceof KubeStatusError, String(bad));
    assert.equal(bad.code, 200);
    assert.match(bad.message, /not valid JSON \(SyntaxError\)/);
  } finally {
    await server.close();
  }
});

test("requestJson: a GET whose body the network cut off is sent again once (an HTTP/2 GOAWAY right behind the answer); other methods are not", async () => {
  const calls: string[] = [];
  let cuts = 1;
  /** 200 whose body fails after its first bytes while `cuts` lasts, then whole. */
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
    const cut = cuts-- > 0;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        if (!cut) {
          c.enqueue(new TextEncoder().encode('{"kind":"ConfigMap"}'));
          c.close();
        } else {
          c.enqueue(new TextEncoder().encode('{"kind":'));
          c.error(new TypeError("terminated"));
        }
      },
    });
    return Promise.resolve(
      new Response(body, { status: 200, headers: { "content-type": "application/json" } }),
    );
  };
  const client = new KubeClient({ server: "https://k:6443", fetch });
  assert.deepEqual(await client.requestJson("/api/v1/x"), { kind: "ConfigMap" });
  assert.deepEqual(calls, ["GET /api/v1/x", "GET /api/v1/x"]);
  // twice in a row: a KubeNetworkError, after exactly one retry
  calls.length = 0;
  cuts = 2;
  const twice = await client.requestJson("/api/v1/y").catch((e) => e);
  assert.ok(twice instanceof KubeNetworkError, String(twice));
  assert.deepEqual(calls, ["GET /api/v1/y", "GET /api/v1/y"]);
  // a write is never sent again
  calls.length = 0;
  cuts = 1;
  const write = await client.requestJson("/api/v1/z", { method: "POST", body: {} }).catch((e) => e);
  assert.ok(write instanceof KubeNetworkError, String(write));
  assert.deepEqual(calls, ["POST /api/v1/z"]);
  // an abort while the body is read is the abort, not a retry
  calls.length = 0;
  cuts = 1;
  const ac = new AbortController();
  const aborting = (input: RequestInfo | URL, init?: RequestInit) =>
    fetch(input, init).then((res) => (ac.abort(new Error("stop")), res));
  const c2 = new KubeClient({ server: "https://k:6443", fetch: aborting });
  await assert.rejects(c2.requestJson("/api/v1/w", { signal: ac.signal }), /stop/);
  assert.deepEqual(calls, ["GET /api/v1/w"]);
});
