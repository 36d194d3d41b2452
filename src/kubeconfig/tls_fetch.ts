import type { TlsSettings } from "./_resolve.ts";
import { runtimeName } from "./_runtime.ts";
import { KubeConfigError, TlsUnsupportedError } from "./kube_config_error.ts";

export type { TlsSettings } from "./_resolve.ts";

/** A `fetch` bound to TLS settings, and how to release its connections. */
export interface TlsFetch {
  /** The configured `fetch`, for `KubeClient`'s `fetch` option. */
  fetch: typeof fetch;
  /** Which implementation serves it: `"native"`, `"deno-http-client"`, `"undici"` or `"bun-tls"`. */
  via: "native" | "deno-http-client" | "undici" | "bun-tls";
  /** Closes the connection pool (pending requests are aborted). Idempotent. */
  close(): Promise<void>;
}

/** Options of {@linkcode createTlsFetch}. */
export interface CreateTlsFetchOptions {
  /** Override runtime detection (tests). Default: detected. */
  runtime?: "deno" | "bun" | "node" | "workerd" | "edge-runtime" | "unknown";
}

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/**
 * Makes a `fetch` that trusts `tls.ca`, presents `tls.cert`/`tls.key`,
 * skips verification only when `tls.insecure` is set, and verifies against
 * `tls.serverName` when given, using what each runtime offers:
 *
 * - Node: an `undici` 7 `Agent` (`connect: { ca, cert, key, servername, rejectUnauthorized }`) with undici's `fetch`.
 * - Deno: `Deno.createHttpClient({ caCerts, cert, key })` passed as `client`; Deno's client cannot skip
 *   verification or override the server name, so for `insecure-skip-tls-verify` or `tls-server-name`
 *   undici is used on Deno too (through `npm:undici`).
 * - Bun: its `fetch`'s `tls` option.
 * - Anything else (Cloudflare Workers, Vercel edge, Deno Deploy, i.e. Deno without
 *   `Deno.createHttpClient`...): the global `fetch` when no custom TLS is asked for; a
 *   {@linkcode TlsUnsupportedError} naming the fields otherwise.
 *
 * Verification is never turned off globally (`NODE_TLS_REJECT_UNAUTHORIZED` is never touched).
 *
 * @example
 * ```ts
 * import { createTlsFetch } from "./tls_fetch.ts";
 * const ca = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
 * const tls = await createTlsFetch({ ca });
 * try {
 *   const res = await tls.fetch("https://127.0.0.1:6443/version");
 *   console.log(res.status);
 * } finally {
 *   await tls.close();
 * }
 * ```
 */
export async function createTlsFetch(
  tls: TlsSettings,
  options: CreateTlsFetchOptions = {},
): Promise<TlsFetch> {
  const { runtime = runtimeName() } = options;
  const needs = neededFields(tls);
  if (needs.length === 0) {
    const f = globalThis.fetch;
    return {
      fetch: (input, init) => f(input, init),
      via: "native",
      close: () => Promise.resolve(),
    };
  }
  if (runtime === "deno" && !tls.insecure && !tls.serverName && g.Deno?.createHttpClient) {
    let client: { close(): void };
    try {
      client = g.Deno.createHttpClient({
        ...(tls.ca ? { caCerts: [tls.ca] } : {}),
        ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      });
    } catch {
      // Deno's message may describe the key material; name the fields instead.
      throw new KubeConfigError("a certificate or key that does not parse", {
        field: needs.join(", "),
      });
    }
    let closed = false;
    return {
      fetch: (input, init) => fetch(input, { ...init, client } as unknown as RequestInit),
      via: "deno-http-client",
      close: () => {
        if (!closed) client.close();
        closed = true;
        return Promise.resolve();
      },
    };
  }
  if (runtime === "deno" && !g.Deno?.createHttpClient) {
    // Deno Deploy and other hosted Deno: no custom TLS for fetch.
    throw new TlsUnsupportedError("deno without Deno.createHttpClient", needs);
  }
  if (runtime === "node" || runtime === "deno") return await undiciFetch(tls, runtime === "deno");
  if (runtime === "bun") {
    const opts = {
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      ...(tls.serverName ? { serverName: tls.serverName } : {}),
      rejectUnauthorized: !tls.insecure,
    };
    return {
      fetch: (input, init) => fetch(input, { ...init, tls: opts } as unknown as RequestInit),
      via: "bun-tls",
      close: () => Promise.resolve(),
    };
  }
  throw new TlsUnsupportedError(runtime, needs);
}

function neededFields(tls: TlsSettings): string[] {
  const f = tls.fields ?? {};
  const needs: string[] = [];
  if (tls.ca) needs.push(f.ca ?? "certificate-authority");
  if (tls.cert) needs.push(f.cert ?? "client-certificate");
  if (tls.key) needs.push(f.key ?? "client-key");
  if (tls.insecure) needs.push(f.insecure ?? "insecure-skip-tls-verify");
  if (tls.serverName) needs.push(f.serverName ?? "tls-server-name");
  return needs;
}

async function undiciFetch(tls: TlsSettings, onDeno: boolean): Promise<TlsFetch> {
  // Loaded only where used; `npm:` for URL importers, rewritten to `undici` in the npm build.
  // deno-lint-ignore no-import-prefix
  const undici = await import("npm:undici@^7");
  const agent = new undici.Agent({
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
  });
  let closing: Promise<void> | undefined;
  return {
    fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
      undici.fetch(
        input as Parameters<typeof undici.fetch>[0],
        { ...init, dispatcher: agent } as Parameters<typeof undici.fetch>[1],
      )) as unknown as typeof fetch,
    via: "undici",
    close: () => (closing ??= agent.destroy().catch(() => {})),
  };
}
