import type { TokenProvider } from "../transport/kube_client.ts";
import { readText } from "./_runtime.ts";
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
 * import { KubeClient } from "../../mod.ts";
 * import { tokenFileProvider } from "./token_file_provider.ts";
 * const client = new KubeClient({
 *   server: "https://10.0.0.1:443",
 *   token: tokenFileProvider("/var/run/secrets/kubernetes.io/serviceaccount/token"),
 * });
 * console.log(client.server.href);
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
