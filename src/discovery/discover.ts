/**
 * `discover(client)`: the client's {@linkcode ApiDiscovery}, read once and cached.
 *
 * @module
 */
import { abortable } from "../async/_abortable.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import { ApiDiscovery, type ApiDiscoveryOptions } from "./api_discovery.ts";

/** Options of {@linkcode discover}. */
export interface DiscoverOptions extends ApiDiscoveryOptions {
  /** Aborts the first read (a later call starts its own); rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
}

interface Entry {
  loading: Promise<ApiDiscovery>;
  signal?: AbortSignal;
}

const cache = new WeakMap<KubeClient, Entry>();

/**
 * The API discovery of `client`'s server (see {@linkcode ApiDiscovery}),
 * read on the first call and cached per client: later calls (while it
 * loads, or after) return the same `ApiDiscovery` without a request, and
 * their `refreshIntervalMs` and `clock` are ignored. A first read that
 * fails is not cached: the next call reads again. Rejects with the typed
 * error of `/api` or `/apis` (`KubeStatusError`, `KubeNetworkError`...),
 * or with `signal.reason` on abort.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { discover, KubeClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const api = await discover(client);
 * assert.equal(await discover(client), api); // cached: no second read
 * assert.deepEqual(api.find("po")?.apiVersion, "v1");
 * assert.equal(api.find("cm")?.kind, "ConfigMap");
 * await server.close();
 * ```
 */
export async function discover(
  client: KubeClient,
  options: DiscoverOptions = {},
): Promise<ApiDiscovery> {
  const { signal, ...rest } = options ?? {};
  signal?.throwIfAborted();
  for (;;) {
    let entry = cache.get(client);
    if (!entry) {
      const api = new ApiDiscovery(client, rest);
      const loading = api.refresh({ signal }).then(() => api);
      const made: Entry = { loading, signal };
      cache.set(client, made);
      loading.catch(() => {
        if (cache.get(client) === made) cache.delete(client);
      });
      entry = made;
    }
    try {
      return await abortable(entry.loading, signal);
    } catch (err) {
      signal?.throwIfAborted();
      // another caller's abort ended the first read: read again
      if (entry.signal?.aborted && entry.signal !== signal) continue;
      throw err;
    }
  }
}
