import type { TlsSettings } from "./_resolve.ts";
import { runtimeName } from "./_runtime.ts";
import { neededFields, needsUndici, type TlsFetch, webTlsFetch } from "./_web_tls_fetch.ts";
import { resolveHttp2, resolveMaxStreams } from "./_http2_option.ts";
import { h2Dispatch, type UndiciH2 } from "./_undici_h2.ts";
import { resumeAfterGoAway } from "./_resume_after_goaway.ts";
import { serializedOnH2 } from "./_serialized_on_h2.ts";
import { MissingPackageError } from "./missing_package_error.ts";

export type { TlsSettings } from "./_resolve.ts";
export type { TlsFetch } from "./_web_tls_fetch.ts";

/** Options of {@linkcode createTlsFetch}. */
export interface CreateTlsFetchOptions {
  /** Override runtime detection (tests). Default: detected. */
  runtime?: "deno" | "bun" | "node" | "workerd" | "edge-runtime" | "unknown";
  /**
   * Loads the `undici` package (tests inject a failing one). Default:
   * `import("undici")` (`npm:undici@^7` on Deno), only when custom TLS needs it.
   */
  importUndici?: () => Promise<unknown>;
  /**
   * Speak HTTP/2 where the server offers it (TLS's ALPN picks h2, else
   * HTTP/1.1): on Node, undici's `allowH2`, with many requests (watches)
   * sharing one connection up to the server's `maxConcurrentStreams`,
   * another connection opened beyond it; on Deno, `Deno.createHttpClient`'s
   * `http2`. `false`: HTTP/1.1 only (one connection per request in flight).
   * No effect where the runtime's own `fetch` serves (plain HTTP, Bun, the
   * edge), nor on Deno's undici path (`insecure-skip-tls-verify`,
   * `tls-server-name`), which stays on HTTP/1.1. Default: `true`.
   */
  http2?: boolean;
  /**
   * At most this many requests (watches included) in flight on one HTTP/2
   * connection; past it another connection opens, no request waits. On
   * Deno, whose client cannot learn the server's
   * `SETTINGS_MAX_CONCURRENT_STREAMS`, requests are spread over several
   * `Deno.HttpClient`s (each its own connection) by this budget: keep it at
   * or below the server's limit, or requests past that limit wait inside
   * their connection. On Node the server's advertised limit applies, capped
   * by this option when given. A whole number >= 1 (`RangeError`
   * otherwise; `TypeError` for a non-number). Default: the server's limit
   * on Node; 100 on Deno (what kube-apiserver advertises by default since
   * its HTTP/2 hardening; older ones advertise 250).
   */
  maxStreamsPerConnection?: number;
}

/**
 * Makes a `fetch` that trusts `tls.ca`, presents `tls.cert`/`tls.key`,
 * skips verification only when `tls.insecure` is set, and verifies against
 * `tls.serverName` when given, using what each runtime offers:
 *
 * - Node: an `undici` 7 `Agent` (`connect: { ca, cert, key, servername, rejectUnauthorized }`) with undici's `fetch`;
 *   HTTP/2 when the server offers it (`allowH2`; see the `http2` option): watches share one connection
 *   up to the server's `maxConcurrentStreams`, and another connection opens beyond it.
 * - Deno: `Deno.createHttpClient({ caCerts, cert, key })` passed as `client`, another such client (another
 *   connection) for each `maxStreamsPerConnection` requests in flight (see that option); Deno's client cannot skip
 *   verification or override the server name, so for `insecure-skip-tls-verify` or `tls-server-name`
 *   undici is used on Deno too (through `npm:undici`).
 * - Bun: its `fetch`'s `tls` option.
 * - Anything else (Cloudflare Workers, Vercel edge, Deno Deploy, i.e. Deno without
 *   `Deno.createHttpClient`...): the global `fetch` when no custom TLS is asked for; a
 *   {@linkcode TlsUnsupportedError} naming the fields otherwise.
 *
 * undici is an optional peer dependency of the npm package, loaded only here
 * (on first use): when it is missing, this rejects with a
 * {@linkcode MissingPackageError} saying how to install it.
 *
 * Verification is never turned off globally (`NODE_TLS_REJECT_UNAUTHORIZED` is never touched).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createTlsFetch } from "./tls_fetch.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "apps" } });
 * // From a kubeconfig: { ca, cert, key, insecure, serverName } (PEM text); none here (plain HTTP).
 * const tls = await createTlsFetch({});
 * try {
 *   assert.equal(tls.via, "native"); // the runtime's own fetch: no custom TLS asked for
 *   const res = await tls.fetch(`${server.url}/api/v1/namespaces/apps/configmaps`);
 *   assert.equal(res.status, 200);
 *   assert.equal((await res.json()).items.length, 1);
 * } finally {
 *   await tls.close();
 *   await server.close();
 * }
 * ```
 */
export async function createTlsFetch(
  tls: TlsSettings,
  options: CreateTlsFetchOptions = {},
): Promise<TlsFetch> {
  const { runtime = runtimeName(), importUndici = defaultImportUndici } = options;
  const http2 = resolveHttp2(options.http2, "createTlsFetch");
  const maxStreamsPerConnection = resolveMaxStreams(
    options.maxStreamsPerConnection,
    "createTlsFetch",
  );
  if (needsUndici(tls, runtime)) {
    // Deno's undici path stays on HTTP/1.1: its node:http2 client is not proven for long watches here.
    return await undiciFetch(
      tls,
      runtime === "deno",
      importUndici,
      http2 && runtime === "node",
      maxStreamsPerConnection,
    );
  }
  return webTlsFetch(tls, runtime, { http2, maxStreamsPerConnection });
}

// `npm:` for URL importers (Deno resolves it without config), rewritten to `undici` in the npm build.
// deno-lint-ignore no-import-prefix
const defaultImportUndici = () => import("npm:undici@^7");

/** The part of undici used here. */
interface Undici extends Partial<UndiciH2> {
  Agent: new (options: Record<string, unknown>) => { destroy(): Promise<void> };
  fetch: (input: unknown, init: unknown) => Promise<Response>;
}

async function loadUndici(
  importUndici: () => Promise<unknown>,
  neededFor: string,
): Promise<Undici> {
  let mod: Partial<Undici> | undefined;
  try {
    mod = (await importUndici()) as Partial<Undici>;
  } catch (err) {
    throw new MissingPackageError("undici", neededFor, { range: "^7", cause: err });
  }
  if (typeof mod?.Agent !== "function" || typeof mod?.fetch !== "function") {
    throw new MissingPackageError("undici", neededFor, {
      range: "^7",
      cause: new TypeError("the loaded module has no Agent or fetch"),
    });
  }
  return mod as Undici;
}

async function undiciFetch(
  tls: TlsSettings,
  onDeno: boolean,
  importUndici: () => Promise<unknown>,
  http2: boolean,
  maxStreams: number | undefined,
): Promise<TlsFetch> {
  const neededFor = `custom TLS on ${onDeno ? "Deno" : "Node"} (${neededFields(tls).join(", ")})`;
  const undici = await loadUndici(importUndici, neededFor);
  const common = {
    // No undici deadlines: a watch may be quiet for minutes (the watcher has its own idle deadline),
    // and undici's timers would outlive the agent.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: {
      // On Deno, undici's connect-timeout timer outlives the agent (test sanitizers flag it):
      // the connect is bounded by the request's signal instead. Node keeps undici's 10 s.
      ...(onDeno ? { timeout: 0 } : {}),
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      ...(tls.serverName ? { servername: tls.serverName } : {}),
      rejectUnauthorized: !tls.insecure,
    },
  };
  // h2: per-origin clients, each connection kept within its server's stream limit, one connection made
  // at a time (see _undici_h2.ts); without Client and buildConnector (an unexpected undici), the Agent
  // with h2 and one request per connection.
  const h2 = http2 && typeof undici.Client === "function" &&
      typeof undici.buildConnector === "function"
    ? h2Dispatch(undici as UndiciH2, maxStreams, { ...common, allowH2: true })
    : undefined;
  const agent = h2
    ? undefined
    : new undici.Agent({ ...common, ...(http2 ? { allowH2: true } : {}) });
  // Writes over HTTP/1.1 keep-alive (see serializedOnH2): undici's h2 client starts a request with a body
  // (fetch always streams one) or a non-idempotent one only when nothing else runs on its connection,
  // so on a connection carrying watches a write would wait for every watch to end. A separate HTTP/1.1
  // agent gives each concurrent write its own connection (what writes had before h2), reused by the
  // next; h2 with one stream per connection would do the same with an h2 handshake per connection, and
  // a GOAWAY, which undici answers by closing the socket, could lose the write's response.
  const writes = http2 ? new undici.Agent(common) : undefined;
  let closing: Promise<void> | undefined;
  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => {
      if (writes && serializedOnH2(input, init)) {
        return undici.fetch(input, { ...init, dispatcher: writes });
      }
      if (!h2) return undici.fetch(input, { ...init, dispatcher: agent });
      const url = input instanceof URL ? input.href : typeof input === "string" ? input : input.url;
      // The caller's signal as fetch takes it: init's when given (even null: none), else the Request's.
      const signal = init?.signal !== undefined
        ? init.signal
        : input instanceof Request
        ? input.signal
        : undefined;
      const overH1 = () => undici.fetch(input, { ...init, dispatcher: writes });
      // A watch lost that way is the watcher's to resume (from its resourceVersion); any other GET's
      // body is resumed once over HTTP/1.1 if the GOAWAY came before its first byte.
      const resumable = writes && !/[?&]watch=(1|t|true)(&|#|$)/i.test(url);
      return h2.gate(url, signal, (dispatcher) => undici.fetch(input, { ...init, dispatcher }))
        .then((res) => resumable ? resumeAfterGoAway(res, overH1, closedByGoAway) : res)
        .catch((err: unknown) => {
          // undici closes an h2 connection on any GOAWAY, failing the requests on it even when the
          // server answered them first. kube-apiserver (1.29+) answers every unauthenticated
          // request (a revoked or rotated token: 401) with a GOAWAY, so the 401 that would make the
          // client refresh its token never arrives. A request here is a GET or HEAD without a body
          // (the others go to `writes`): sent again once over HTTP/1.1, its answer arrives whole.
          if (!writes || signal?.aborted || !closedByGoAway(err)) throw err;
          return overH1();
        });
    }) as typeof fetch,
    via: "undici",
    close: () => (closing ??= Promise.all([h2?.close(), agent?.destroy(), writes?.destroy()]).then(
      () => {},
      () => {},
    )),
  };
}

/** Whether `err` (or a cause of it) is undici's failure of a request whose h2 connection got a GOAWAY. */
function closedByGoAway(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (/"GOAWAY" frame received/.test(e.message)) return true;
  }
  return false;
}
