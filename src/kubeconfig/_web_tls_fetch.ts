/**
 * TLS for `fetch` with what the runtime itself offers, no package and no
 * `node:*` import: the global `fetch` (no custom TLS), Deno's
 * `Deno.createHttpClient`, Bun's `tls` option. The edge-safe entry point
 * uses only this; `tls_fetch.ts` adds undici for Node (and for what Deno's
 * client cannot do).
 *
 * @module
 */
import type { TlsSettings } from "./_resolve.ts";
import { runtimeName } from "./_runtime.ts";
import { CONNECTION_DEFAULTS } from "./_http2_option.ts";
import { streamBudgetFetch } from "./_stream_budget_fetch.ts";
import { KubeConfigError, TlsUnsupportedError } from "./kube_config_error.ts";

/** A `fetch` bound to TLS settings, and how to release its connections. */
export interface TlsFetch {
  /** The configured `fetch`, for `KubeClient`'s `fetch` option. */
  fetch: typeof fetch;
  /** Which implementation serves it: `"native"`, `"deno-http-client"`, `"undici"` or `"bun-tls"`. */
  via: "native" | "deno-http-client" | "undici" | "bun-tls";
  /** Aborts the requests still running (their bodies too) and closes the connection pool. Idempotent. */
  close(): Promise<void>;
}

/** A runtime, as `runtimeName()` names it. */
export type RuntimeName = "deno" | "bun" | "node" | "workerd" | "edge-runtime" | "unknown";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/** The kubeconfig fields `tls` asks the runtime to honour (empty: the global `fetch` will do). */
export function neededFields(tls: TlsSettings): string[] {
  const f = tls.fields ?? {};
  const needs: string[] = [];
  if (tls.ca) needs.push(f.ca ?? "certificate-authority");
  if (tls.cert) needs.push(f.cert ?? "client-certificate");
  if (tls.key) needs.push(f.key ?? "client-key");
  if (tls.insecure) needs.push(f.insecure ?? "insecure-skip-tls-verify");
  if (tls.serverName) needs.push(f.serverName ?? "tls-server-name");
  return needs;
}

/** Whether `tls` on `runtime` needs undici (Node; Deno for what its client cannot do). */
export function needsUndici(tls: TlsSettings, runtime: RuntimeName): boolean {
  if (neededFields(tls).length === 0) return false;
  if (runtime === "node") return true;
  return runtime === "deno" && !!g.Deno?.createHttpClient && (!!tls.insecure || !!tls.serverName);
}

/**
 * A TLS `fetch` from the runtime's own means. Throws
 * {@linkcode TlsUnsupportedError} where they do not reach: an edge
 * runtime's `fetch` (no custom TLS at all), and Node or Deno when the
 * settings need undici (`tls_fetch.ts` handles those), saying so.
 */
export function webTlsFetch(
  tls: TlsSettings,
  runtime: RuntimeName = runtimeName(),
  options: { http2?: boolean; maxStreamsPerConnection?: number } = {},
): TlsFetch {
  const {
    http2 = CONNECTION_DEFAULTS.http2,
    maxStreamsPerConnection = CONNECTION_DEFAULTS.maxStreamsPerConnection,
  } = options;
  const needs = neededFields(tls);
  if (needs.length === 0) {
    const f = globalThis.fetch;
    return tracked("native", null, (_, input, init) => f(input, init), () => {});
  }
  if (needsUndici(tls, runtime)) {
    throw new TlsUnsupportedError(runtime, needs, {
      hint: runtime === "node"
        ? "On Node, custom TLS goes through the undici package, which only " +
          "kube-reflector/kubeconfig loads: use its loadKubeConfig or createTlsFetch."
        : "Deno's HTTP client cannot skip verification or override the server name; " +
          "kube-reflector/kubeconfig does it with npm:undici.",
    });
  }
  if (runtime === "deno" && g.Deno?.createHttpClient) {
    type DenoClient = { close(): void };
    const options = {
      ...(tls.ca ? { caCerts: [tls.ca] } : {}),
      ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      ...(http2 ? {} : { http2: false }),
    };
    const createClient = (): DenoClient => g.Deno.createHttpClient(options);
    let client: DenoClient;
    try {
      client = createClient();
    } catch {
      // Deno's message may describe the key material; name the fields instead.
      throw new KubeConfigError("a certificate or key that does not parse", {
        field: needs.join(", "),
      });
    }
    const send = (c: DenoClient, input: RequestInfo | URL, init: RequestInit | undefined) =>
      fetch(input, { ...init, client: c } as unknown as RequestInit);
    if (!http2) {
      // HTTP/1.1: the pool already opens a connection per request in flight.
      return tracked("deno-http-client", client, send, (c) => c.close());
    }
    // h2: Deno's client puts every request on one connection and queues those past the server's
    // SETTINGS_MAX_CONCURRENT_STREAMS there (a watch would wait forever), without saying the limit:
    // another client (another connection) per maxStreamsPerConnection requests in flight.
    const budgeted = streamBudgetFetch<DenoClient>({
      budget: maxStreamsPerConnection,
      first: client,
      createClient,
      send,
      closeClient: (c) => c.close(),
    });
    return {
      fetch: budgeted.fetch,
      via: "deno-http-client",
      close: () => {
        budgeted.close();
        return Promise.resolve();
      },
    };
  }
  if (runtime === "deno") {
    // Deno Deploy and other hosted Deno: no custom TLS for fetch.
    throw new TlsUnsupportedError("deno without Deno.createHttpClient", needs);
  }
  if (runtime === "bun") {
    const opts = {
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
      ...(tls.serverName ? { serverName: tls.serverName } : {}),
      rejectUnauthorized: !tls.insecure,
    };
    return tracked(
      "bun-tls",
      null,
      (_, input, init) => fetch(input, { ...init, tls: opts } as unknown as RequestInit),
      () => {},
    );
  }
  throw new TlsUnsupportedError(runtime, needs);
}

/**
 * `send` over one client, every request in flight tracked until its body
 * ends: `close()` aborts those still running (the runtime's pool alone would
 * let them run on), then closes the client.
 */
function tracked<C>(
  via: TlsFetch["via"],
  client: C,
  send: (client: C, input: RequestInfo | URL, init: RequestInit | undefined) => Promise<Response>,
  closeClient: (client: C) => void,
): TlsFetch {
  const one = streamBudgetFetch<C>({
    budget: Infinity,
    first: client,
    gateFirst: false,
    silentMs: Infinity, // (one client: nothing to move to; HTTP/1.1 has a connection per request)
    createClient: () => client, // (never: no budget to reach)
    send,
    closeClient,
  });
  return {
    fetch: one.fetch,
    via,
    close: () => {
      one.close();
      return Promise.resolve();
    },
  };
}
