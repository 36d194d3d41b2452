import type { TokenProvider } from "../transport/kube_client.ts";
import { readText } from "./_node_fs.ts";
import { KubeConfigError } from "./kube_config_error.ts";

/** Options of {@linkcode tokenFileProvider}. */
export interface TokenFileProviderOptions {
  /** Re-read the file when the cached token is older than this. Default: `60_000` (1 minute, as client-go). */
  maxAgeMs?: number;
  /** The kubeconfig file that named the token file, for errors. Default: the token file itself. */
  file?: string;
  /** The field that named the token file, for errors (e.g. `users[me].user.tokenFile`). Default: none. */
  field?: string;
  /** The clock. Default: `Date.now`. */
  now?: () => number;
}

/**
 * A {@linkcode TokenProvider} reading a bearer token from a file (a
 * kubeconfig `tokenFile`, a projected service-account token) so that
 * rotation is picked up: the file is re-read when the cached token is older
 * than `maxAgeMs`, and at once after a 401 (`refresh: true`). Concurrent
 * callers share one read. When a re-read fails but a token was read before,
 * the previous token is used; with none, it rejects with a
 * {@linkcode KubeConfigError} naming the file, never the token.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 * import { KubeClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 * import { tokenFileProvider } from "./token_file_provider.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const server = await FakeApiServer.start({ tokens: ["first", "rotated"] });
 * try {
 *   const path = join(dir, "token"); // in a pod: /var/run/secrets/kubernetes.io/serviceaccount/token
 *   await Deno.writeTextFile(path, "first\n");
 *   const token = tokenFileProvider(path, { maxAgeMs: 60_000 });
 *   const client = new KubeClient({ server: server.url, token });
 *   assert.equal((await client.request("/api/v1/namespaces/default/configmaps")).status, 200);
 *   assert.equal(await token({ refresh: false }), "first"); // cached
 *   await Deno.writeTextFile(path, "rotated\n");
 *   assert.equal(await token({ refresh: false }), "first"); // still fresh: not re-read
 *   assert.equal(await token({ refresh: true }), "rotated"); // after a 401: re-read at once
 * } finally {
 *   await server.close();
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export function tokenFileProvider(
  path: string,
  options: TokenFileProviderOptions = {},
): TokenProvider {
  const { maxAgeMs = 60_000, file, field, now = Date.now } = options;
  if (!(maxAgeMs >= 0)) throw new RangeError("tokenFileProvider: maxAgeMs must be >= 0");
  let cached: { token: string; at: number } | undefined;
  let reading: Promise<string> | undefined;

  const read = async (): Promise<string> => {
    try {
      const text = await readText(path, { file: file ?? path, field });
      const token = text.trim();
      if (!token) throw new KubeConfigError("token file is empty", { file: file ?? path, field });
      cached = { token, at: now() };
      return token;
    } catch (err) {
      if (cached) {
        cached = { token: cached.token, at: now() };
        return cached.token;
      }
      throw err;
    }
  };

  return ({ refresh, signal }) => {
    signal?.throwIfAborted();
    if (!refresh && cached && now() - cached.at < maxAgeMs) return cached.token;
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };
}
