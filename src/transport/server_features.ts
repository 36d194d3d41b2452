/**
 * What the reflector has learnt about one API server, shared by every
 * {@linkcode ListerWatcher} of that server in the process (see
 * {@linkcode serverFeatures}): a server that refused a streaming list is
 * not asked again, and one seen sending periodic bookmarks gets a short
 * idle deadline. Plain data; the watcher reads and updates it.
 */
export interface ServerFeatures {
  /** `false` once the server refused a streaming list, `true` once one worked; `undefined`: not known yet. */
  streamingList?: boolean;
  /**
   * The interval of the periodic bookmarks the server sends on a quiet
   * watch (Kubernetes 1.27+: about a minute), in ms, as last observed;
   * `undefined` while none has been seen.
   */
  bookmarkIntervalMs?: number;
  /** The server's `gitVersion` (`"v1.37.2"`), when it was read (`KubeClient.version()`). */
  version?: string;
  /**
   * `true` once a refused streaming list was reported: the refusal is
   * reported once per server and process (to the `onError` of the watcher
   * refused first), not once per watcher that tried at the same time. Never
   * reset: a later refusal by the same server (a replica of another version
   * during an upgrade) only falls back, as the first did.
   */
  streamingListRefusalReported?: boolean;
}

const registry = new Map<string, ServerFeatures>();

/**
 * The process-wide {@linkcode ServerFeatures} record of the API server at
 * `server` (one record per origin and path prefix, created on first use).
 */
export function serverFeatures(server: string | URL): ServerFeatures {
  const url = new URL(server);
  const key = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  let features = registry.get(key);
  if (!features) registry.set(key, features = {});
  return features;
}
