import { isPermissionRefusal, PermissionDeniedError } from "../api/permission_denied_error.ts";
import { KubeNetworkError, KubeRedirectError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { statusErrorFromResponse } from "./_http_error.ts";
import { serverFeatures } from "./server_features.ts";

const TOKEN = /^[\x21-\x7e]+$/;

/**
 * Supplies the bearer token for each request. Called with `refresh: true`
 * once after a 401, so a provider backed by a file or an exec plugin can
 * fetch a new credential. Return `undefined` to send no token.
 *
 * @example A rotated token, re-read after a 401
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, type TokenProvider } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["old"] });
 * let onDisk = "old"; // say, a projected service account token file
 * let cached: string | undefined;
 * const token: TokenProvider = ({ refresh }) => {
 *   if (refresh || cached === undefined) cached = onDisk; // re-read only when needed
 *   return cached;
 * };
 * const client = new KubeClient({ server: server.url, token });
 * await client.requestJson("/api/v1/pods");
 * onDisk = "new";
 * server.setTokens(["new"]); // the old token is revoked
 * await client.requestJson("/api/v1/pods"); // 401, then one retry with a refreshed token
 * assert.equal(cached, "new");
 * assert.deepEqual(server.requests.slice(-2).map((r) => r.status), [401, 200]);
 * await server.close();
 * ```
 */
export type TokenProvider = (context: {
  refresh: boolean;
  signal?: AbortSignal;
}) => string | undefined | Promise<string | undefined>;

/**
 * Options of {@linkcode KubeClient}.
 */
export interface KubeClientOptions {
  /** The API server's base URL, e.g. `"https://10.0.0.1:6443"` or `"http://127.0.0.1:8001"` (kubectl proxy). Required. */
  server: string | URL;
  /** A bearer token, or a function returning one (for rotation). Default: no token. */
  token?: string | TokenProvider;
  /** Extra headers sent with every request. Default: none. */
  headers?: HeadersInit;
  /** The `fetch` to use (a TLS-configured one, a test double). Default: `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** The `User-Agent` header, where the runtime lets us set it. Default: `"kube-reflector"`. */
  userAgent?: string;
}

/**
 * What `GET /version` answers (the fields the reflector uses; the server sends more).
 */
export interface ServerVersion {
  /** `"1"`. */
  major: string;
  /** `"37"` (may carry a `+`). */
  minor: string;
  /** `"v1.37.2"`. */
  gitVersion: string;
}

/**
 * Options of one {@linkcode KubeClient.request}.
 */
export interface KubeRequestOptions {
  /** HTTP method. Default: `"GET"`. */
  method?: string;
  /** Query parameters. Default: none. */
  query?: URLSearchParams | Record<string, string>;
  /** The `Accept` header. Default: `"application/json"`. */
  accept?: string;
  /**
   * The `Accept-Encoding` header, where the runtime lets us set it. Default:
   * the runtime's own (usually `gzip, br`, decompressed by `fetch`).
   */
  acceptEncoding?: string;
  /**
   * A body to send, serialized with `JSON.stringify` (JSON is valid YAML,
   * so this serves server-side apply too). Default: none.
   */
  body?: unknown;
  /**
   * The body's `Content-Type`. `PATCH` needs the patch's own:
   * `"application/merge-patch+json"`, `"application/json-patch+json"`,
   * `"application/strategic-merge-patch+json"` or, for server-side apply
   * (with the `fieldManager` query parameter), `"application/apply-patch+yaml"`;
   * `application/json` makes the server answer 415. Default:
   * `"application/json"`.
   */
  contentType?: string;
  /** Aborts the request and its body. */
  signal?: AbortSignal;
}

/**
 * A minimal Kubernetes REST client over `fetch`: it knows the server URL and
 * the credentials, and turns failures into typed errors
 * ({@linkcode KubeStatusError} for HTTP answers of 400 and above,
 * {@linkcode KubeNetworkError} for no answer at all). An abort rejects with
 * `signal.reason`. On a 401 it asks a token provider for a fresh token once
 * and retries. Redirects are refused, never followed (`redirect: "manual"`):
 * a 3xx answer, an opaque redirect, or a response a custom `fetch` reached
 * by following one rejects with a {@linkcode KubeRedirectError}: a
 * kubeconfig `server` must be the API server itself, so the credentials
 * never go to, and no object ever comes from, another endpoint. The token is held privately: it never appears in an error, in
 * `JSON.stringify(client)` or in `inspect` output.
 *
 * @example Read objects; the token never shows
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, type KubeList } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ tokens: ["s3cret"] });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "a", namespace: "default" },
 * });
 * const client = new KubeClient({ server: server.url, token: "s3cret" });
 * const path = "/api/v1/namespaces/default/configmaps";
 * const list = await client.requestJson<KubeList>(path, { query: { limit: "10" } });
 * assert.deepEqual(list.items.map((cm) => cm.metadata.name), ["a"]);
 * assert.equal((await client.version()).gitVersion, "v1.20.2");
 * assert.equal(JSON.stringify(client), JSON.stringify({ server: `${server.url}/` }));
 * await server.close();
 * ```
 */
export class KubeClient {
  /** The server's base URL. */
  readonly server: URL;
  #token: TokenProvider | undefined;
  #headers: Headers;
  #fetch: typeof fetch;
  #version: Promise<ServerVersion> | undefined;

  /**
   * Creates a client; it sends nothing until a request is made.
   *
   * @throws {TypeError} when `server` is not an absolute http(s) URL or holds
   *   credentials, when `headers` is invalid, or when there is no `fetch`.
   */
  constructor(options: KubeClientOptions) {
    const {
      server,
      token,
      headers,
      fetch: fetchImpl = globalThis.fetch,
      userAgent = "kube-reflector",
    } = options;
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      throw new TypeError("KubeClient: `server` must be an absolute http(s) URL");
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`KubeClient: unsupported server protocol ${url.protocol}`);
    }
    if (url.username || url.password) {
      throw new TypeError(
        "KubeClient: put credentials in `token` or `headers`, not in the server URL",
      );
    }
    if (typeof fetchImpl !== "function") throw new TypeError("KubeClient: no fetch available");
    this.server = url;
    this.#token = typeof token === "string" ? () => token : token;
    try {
      this.#headers = new Headers(headers);
    } catch {
      // the runtime's message quotes the value, which may be a credential
      throw new TypeError("KubeClient: `headers` holds an invalid header name or value");
    }
    if (!this.#headers.has("user-agent")) this.#headers.set("user-agent", userAgent);
    this.#fetch = fetchImpl;
  }

  /**
   * Sends one request to a path under the server URL. Resolves with the
   * response when its status is below 400 (the caller owns the body);
   * rejects with a typed error otherwise (a {@linkcode KubeConflictError}
   * for a 409 `Conflict`). Any method goes (`POST`, `PUT`, `PATCH`,
   * `DELETE`: see `contentType`); nothing is retried, write or not, except
   * once after a 401 when a token provider gives a fresh token (an
   * unauthenticated request was never acted on). For typed writes, see
   * {@linkcode resourceClient}.
   */
  async request(path: string, options: KubeRequestOptions = {}): Promise<Response> {
    const {
      method = "GET",
      query,
      accept = "application/json",
      acceptEncoding,
      body,
      contentType = "application/json",
      signal,
    } = options;
    signal?.throwIfAborted();
    if (typeof path !== "string" || !path.startsWith("/") || /[?#]/.test(path)) {
      // a "?" would be sent encoded, as part of the path, and the query lost
      throw new TypeError(
        "KubeClient.request: the path must start with / and hold no ? or # (the query goes in options.query)",
      );
    }
    const url = new URL(this.server);
    url.pathname = url.pathname.replace(/\/$/, "") + path;
    url.search = new URLSearchParams(query).toString();
    const described = `${method} ${path}`;
    const send = { method, accept, acceptEncoding, body, contentType, described, signal };
    let res = await this.#send(url, send, false);
    if (res.status === 401 && this.#token) {
      await res.body?.cancel().catch(() => {});
      res = await this.#send(url, send, true);
    }
    if (res.status >= 400) throw await statusErrorFromResponse(res, described);
    return res;
  }

  /**
   * Sends a request and decodes its JSON body. A body whose read fails (the
   * connection reset, an HTTP/2 GOAWAY mid-body) rejects with a
   * {@linkcode KubeNetworkError}, after one more try for a GET; a body that
   * is not JSON, with a {@linkcode KubeStatusError} naming the status it
   * came with.
   */
  async requestJson<T>(path: string, options: KubeRequestOptions = {}): Promise<T> {
    const method = options.method ?? "GET";
    const described = `${method} ${path}`;
    // The body's read failing (a reset; on HTTP/2 a GOAWAY right behind the
    // answer, which undici meets by closing the connection) is the network's
    // fault, not the server's JSON. A GET is sent again once.
    let res = await this.request(path, options);
    let text = await bodyOf(res, described, options.signal).catch((err) => {
      if (method.toUpperCase() !== "GET" || !(err instanceof KubeNetworkError)) throw err;
      return undefined;
    });
    if (text === undefined) {
      res = await this.request(path, options);
      text = await bodyOf(res, described, options.signal);
    }
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new KubeStatusError({
        code: res.status,
        request: described,
        bodyDescription: `response body is not valid JSON (${
          err instanceof Error ? err.name : "error"
        })`,
      });
    }
  }

  async #send(
    url: URL,
    opts: {
      method: string;
      accept: string;
      acceptEncoding: string | undefined;
      body: unknown;
      contentType: string;
      described: string;
      signal: AbortSignal | undefined;
    },
    refresh: boolean,
  ): Promise<Response> {
    const { method, accept, acceptEncoding, body, contentType, described, signal } = opts;
    const headers = new Headers(this.#headers);
    headers.set("accept", accept);
    if (acceptEncoding !== undefined) headers.set("accept-encoding", acceptEncoding);
    const token = await this.#token?.({ refresh, signal });
    if (token) {
      // Checked here so that the runtime's own header check, which quotes
      // the value, never sees a malformed token.
      if (!TOKEN.test(token)) {
        throw new TypeError(
          "KubeClient: the bearer token holds characters not allowed in an HTTP header (whitespace, control characters or non-ASCII); check the token file or provider",
        );
      }
      headers.set("authorization", `Bearer ${token}`);
    }
    let payload: string | undefined;
    let res: Response;
    if (body !== undefined) {
      payload = JSON.stringify(body);
      headers.set("content-type", contentType);
    }
    try {
      // Called unbound: workerd's fetch throws "Illegal invocation" when
      // called as a method of another object (this client).
      const doFetch = this.#fetch;
      // Redirects are never followed: see refuseRedirect.
      res = await doFetch(url, { method, headers, body: payload, signal, redirect: "manual" });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (isPermissionRefusal(err)) {
        throw new PermissionDeniedError(described, "net", url.host, err);
      }
      throw new KubeNetworkError(described, err);
    }
    await refuseRedirect(res, url, described);
    return res;
  }

  /**
   * The server's version (`GET /version`), read once per client and cached
   * (a failed read is not cached). The reflector reads it when it explains
   * a decision, such as giving up streaming lists for this server.
   */
  version(options: { signal?: AbortSignal } = {}): Promise<ServerVersion> {
    const read = this.#version ??= this.requestJson<ServerVersion>("/version", options).then(
      (v) => {
        if (v === null || typeof v !== "object" || typeof v.gitVersion !== "string") {
          throw new TypeError("GET /version: the answer is not a version");
        }
        serverFeatures(this.server).version = v.gitVersion;
        return v;
      },
    );
    read.catch(() => {
      if (this.#version === read) this.#version = undefined;
    });
    return read;
  }

  /** What `JSON.stringify` shows: the server only. */
  toJSON(): { server: string } {
    return { server: this.server.href };
  }
}

/**
 * Throws a {@linkcode KubeRedirectError} for a redirect answer (its body
 * released): a 3xx status, an `opaqueredirect` response (status 0, where
 * the runtime hides the redirect), or a response that a `fetch` ignoring
 * `redirect: "manual"` reached by following one (`redirected`).
 */
async function refuseRedirect(res: Response, url: URL, described: string): Promise<void> {
  const opaque = res.type === "opaqueredirect";
  if (!opaque && !res.redirected && (res.status < 300 || res.status > 399)) return;
  await res.body?.cancel().catch(() => {});
  let location: URL | undefined;
  try {
    const header = opaque || res.redirected ? null : res.headers.get("location");
    if (header) location = new URL(header, url);
    else if (res.redirected && res.url) location = new URL(res.url);
  } catch {
    location = undefined; // not a URL: the error says "redirect refused" only
  }
  // A followed redirect hides its 3xx status, as an opaque one does: code 0.
  throw new KubeRedirectError(described, opaque || res.redirected ? 0 : res.status, location);
}

/** `res`'s text; a read that fails is a {@linkcode KubeNetworkError} (or the abort of `signal`). */
async function bodyOf(
  res: Response,
  described: string,
  signal: AbortSignal | undefined,
): Promise<string> {
  try {
    return await res.text();
  } catch (err) {
    signal?.throwIfAborted();
    throw new KubeNetworkError(described, err);
  }
}
