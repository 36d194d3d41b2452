import type { TlsSettings } from "./_resolve.ts";
import { runtimeName } from "./_runtime.ts";
import { neededFields, needsUndici, type TlsFetch, webTlsFetch } from "./_web_tls_fetch.ts";
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
}

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
  if (needsUndici(tls, runtime)) return await undiciFetch(tls, runtime === "deno", importUndici);
  return webTlsFetch(tls, runtime);
}

// `npm:` for URL importers (Deno resolves it without config), rewritten to `undici` in the npm build.
// deno-lint-ignore no-import-prefix
const defaultImportUndici = () => import("npm:undici@^7");

/** The part of undici used here. */
interface Undici {
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
): Promise<TlsFetch> {
  const neededFor = `custom TLS on ${onDeno ? "Deno" : "Node"} (${neededFields(tls).join(", ")})`;
  const undici = await loadUndici(importUndici, neededFor);
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
    fetch:
      ((input: RequestInfo | URL, init?: RequestInit) =>
        undici.fetch(input, { ...init, dispatcher: agent })) as typeof fetch,
    via: "undici",
    close: () => (closing ??= agent.destroy().catch(() => {})),
  };
}
