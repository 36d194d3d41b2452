/**
 * Shared helpers of the kubeconfig tests: a fresh PKI and TLS server per
 * test, kubeconfig files written next to them, and a request through a
 * loaded connection.
 *
 * @module
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
// deno-lint-ignore no-import-prefix
import { stringify } from "npm:yaml@^2";
import { createPki, type Pki } from "./_pki.ts";
import { startTlsServer, type TlsServer } from "./_tls_server.ts";
import type { KubeConnection } from "../../kubeconfig.ts";

/** YAML text of a value. */
export const toYaml: (value: unknown) => string = stringify;

/** Base64 of UTF-8 text. */
export function b64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** A one-context kubeconfig object. */
export function kubeconfig(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  extra: { namespace?: string; name?: string } = {},
): Record<string, unknown> {
  const name = extra.name ?? "test";
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": name,
    clusters: [{ name: `${name}-cluster`, cluster }],
    users: [{ name: `${name}-user`, user }],
    contexts: [{
      name,
      context: {
        cluster: `${name}-cluster`,
        user: `${name}-user`,
        ...(extra.namespace ? { namespace: extra.namespace } : {}),
      },
    }],
  };
}

/** Writes `config` (an object as YAML, or text) to `dir/name`; returns the path. */
export async function writeConfig(
  dir: string,
  name: string,
  config: Record<string, unknown> | string,
): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof config === "string" ? config : stringify(config));
  return path;
}

/** Runs `fn` with a fresh PKI and a TLS server, closing both afterwards. */
export async function withTls(
  fn: (pki: Pki, server: TlsServer) => Promise<void>,
  options: { accept?: string[]; named?: boolean } = {},
): Promise<void> {
  const pki = await createPki();
  const server = await startTlsServer(pki, {
    accept: options.accept,
    cert: options.named ? pki.namedServer : undefined,
  });
  try {
    await fn(pki, server);
  } finally {
    await server.close();
    await pki.cleanup();
  }
}

/** Lists configmaps through `conn`, then closes it. */
export async function listOnce(conn: KubeConnection): Promise<number> {
  try {
    const list = await conn.client.requestJson<{ items: unknown[] }>(
      `/api/v1/namespaces/${conn.namespace}/configmaps`,
    );
    return list.items.length;
  } finally {
    await conn.close();
  }
}
