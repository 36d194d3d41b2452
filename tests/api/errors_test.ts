import assert from "node:assert/strict";
import { inspect } from "node:util";
import { test } from "../_test.ts";
import { KubeNetworkError, KubeRedirectError } from "../../src/api/errors.ts";
import { KubeStatusError } from "../../src/api/kube_status_error.ts";
import { isRetriable } from "../../src/api/predicates.ts";

function coded(message: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });

test("KubeNetworkError names the innermost cause as undici, Deno and Bun wrap it", () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    [
      "undici: refused",
      fetchFailed(coded("connect ECONNREFUSED 127.0.0.1:6443", "ECONNREFUSED")),
      "ECONNREFUSED",
      /: network error: ECONNREFUSED \(connection refused\)$/,
    ],
    [
      "undici: DNS",
      fetchFailed(coded("getaddrinfo ENOTFOUND kube.invalid", "ENOTFOUND")),
      "ENOTFOUND",
      /: network error: ENOTFOUND \(host not found\)$/,
    ],
    [
      "undici: self-signed",
      fetchFailed(coded("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT")),
      "DEPTH_ZERO_SELF_SIGNED_CERT",
      /self-signed certificate/,
    ],
    [
      "undici: expired",
      fetchFailed(coded("certificate has expired", "CERT_HAS_EXPIRED")),
      "CERT_HAS_EXPIRED",
      /certificate has expired/,
    ],
    [
      "undici: happy eyeballs",
      fetchFailed(
        Object.assign(
          new AggregateError([coded("connect ECONNREFUSED ::1:6443", "ECONNREFUSED")]),
          {
            code: "ECONNREFUSED",
          },
        ),
      ),
      "ECONNREFUSED",
      /ECONNREFUSED \(connection refused\)/,
    ],
    [
      "Deno: refused",
      fetchFailed(
        new Error(
          "error sending request for url (http://127.0.0.1:6443/api/v1/pods?token=SECRET): client error (Connect): tcp connect error: Connection refused (os error 111)",
        ),
      ),
      "ECONNREFUSED",
      /: network error: ECONNREFUSED \(connection refused\)$/,
    ],
    [
      "Deno: DNS",
      fetchFailed(
        new Error(
          "error sending request for url (https://kube.invalid/api?watch=1&SECRET): client error (Connect): dns error: failed to lookup address information: Name or service not known",
        ),
      ),
      "ENOTFOUND",
      /ENOTFOUND kube\.invalid \(host not found\)/,
    ],
    [
      "Deno: expired",
      fetchFailed(
        new Error(
          "error sending request for url (https://127.0.0.1:1/x?SECRET): client error (Connect): invalid peer certificate: Expired",
        ),
      ),
      "CERT_HAS_EXPIRED",
      /certificate has expired/,
    ],
    [
      "Bun: code on the error itself",
      Object.assign(new TypeError("Unable to connect. Is the computer able to access the url?"), {
        code: "ConnectionRefused",
      }),
      "ECONNREFUSED",
      /ECONNREFUSED \(connection refused\)/,
    ],
    [
      "Bun: Node-style code",
      Object.assign(new TypeError("ECONNREFUSED: Unable to connect."), { code: "ECONNREFUSED" }),
      "ECONNREFUSED",
      /ECONNREFUSED \(connection refused\)/,
    ],
    [
      "mid-body: undici socket closed",
      new TypeError("terminated", { cause: coded("other side closed", "UND_ERR_SOCKET") }),
      "UND_ERR_SOCKET",
      /UND_ERR_SOCKET \(connection closed by the server\)/,
    ],
  ];
  for (const [what, cause, code, message] of cases) {
    const err = new KubeNetworkError("GET /api/v1/pods", cause);
    assert.equal(err.code, code, what);
    assert.match(err.message, /^GET \/api\/v1\/pods: network error: /, what);
    assert.match(err.message, message, `${what}: ${err.message}`);
    assert.ok(!err.message.includes("SECRET"), `${what}: ${err.message}`);
    assert.equal(err.cause, cause, what);
    assert.ok(isRetriable(err));
  }
});

test("KubeNetworkError keeps unknown causes short and strips URLs' queries, credentials and header values", () => {
  const hostile = [
    "proxy said: Authorization: Bearer SECRET-1 rejected",
    "bad header authorization=Basic SECRET-2",
    "request to https://user:SECRET-3@kube.example:6443/api/v1/pods?watch=1&token=SECRET-4#SECRET-5 failed",
    "token=SECRET-6 password: SECRET-7",
    "bearer SECRET-8, then x-api-key: SECRET-9",
    `line one\nline two\u0000 with "cookie": "SECRET-10"`,
  ];
  for (const text of hostile) {
    const err = new KubeNetworkError("GET /api/v1/pods", fetchFailed(new Error(text)));
    assert.ok(!/SECRET/.test(err.message), err.message);
    assert.ok(!err.message.includes("\n") && !err.message.includes("\u0000"), err.message);
    assert.equal(err.code, undefined);
  }
  const url = new KubeNetworkError(
    "GET /x",
    new Error("failed: https://kube.example:6443/api/v1/pods?x=1"),
  );
  assert.match(url.message, /https:\/\/kube\.example:6443\/api\/v1\/pods$/);
  const long = new KubeNetworkError("GET /x", new Error("y".repeat(10_000)));
  assert.ok(long.message.length < 260, `${long.message.length} characters`);
  assert.equal(
    new KubeNetworkError("GET /api/v1/pods", new TypeError("fetch failed")).message,
    "GET /api/v1/pods: network error: fetch failed",
  );
  assert.match(new KubeNetworkError("GET /x", "a string").message, /network error: a string$/);
  assert.match(new KubeNetworkError("GET /x", undefined).message, /network error: unknown error$/);
  const loop: { message: string; cause?: unknown } = { message: "looping" };
  loop.cause = loop;
  assert.match(new KubeNetworkError("GET /x", loop).message, /looping$/);
  assert.ok(typeof inspect(new KubeNetworkError("GET /x", loop)) === "string");
});

test("KubeRedirectError is a non-retriable KubeStatusError naming the target without query or credentials", () => {
  const err = new KubeRedirectError(
    "GET /api/v1/pods",
    302,
    "https://user:SECRET@login.example/sso?state=SECRET#SECRET",
  );
  assert.ok(err instanceof KubeStatusError);
  assert.equal(err.code, 302);
  assert.equal(err.location, "https://login.example/sso");
  assert.equal(
    err.message,
    "GET /api/v1/pods: 302: redirect refused (to https://login.example/sso)",
  );
  assert.ok(!inspect(err).includes("SECRET"));
  assert.equal(isRetriable(err), false);
  assert.equal(new KubeRedirectError("GET /x", 0).message, "GET /x: 0: redirect refused");
  assert.equal(new KubeRedirectError("GET /x", 301, "not a url").location, "an invalid location");
  assert.equal(
    new KubeRedirectError("GET /x", 301, "javascript:alert(1)").location,
    "javascript: URL",
  );
});
