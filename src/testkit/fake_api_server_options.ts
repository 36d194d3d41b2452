/**
 * The options of {@linkcode FakeApiServer.start}, and their validation.
 *
 * @module
 */
import type { Behaviour } from "./_context.ts";
import type { ListenerTransport } from "./_listener.ts";
import type { ResourceDefinition } from "./types.ts";

/**
 * Options of `FakeApiServer.start`. Every field is optional.
 */
export interface FakeApiServerOptions {
  /** Port to listen on. Default: `0` (a free port). */
  port?: number;
  /** Address to listen on. Default: `"127.0.0.1"`. */
  hostname?: string;
  /** Resources served besides the defaults (configmaps, secrets, pods, namespaces, deployments, coordination.k8s.io leases). Default: `[]`. */
  resources?: ResourceDefinition[];
  /** Change events kept for watches from a resourceVersion and exact lists. Default: `1000`. */
  historySize?: number;
  /** The resourceVersion before the first write. Default: `1`. */
  startResourceVersion?: number;
  /** How long a LIST at a future resourceVersion waits before its 504. Default: `0` (the real server: 3 s). */
  tooLargeDelayMs?: number;
  /** Paginate `resourceVersion=0` lists (a server without watch cache) instead of ignoring `limit`. Default: `false`. */
  paginateResourceVersionZero?: boolean;
  /** Lifetime of continue tokens. Default: `300_000` (etcd's 5-minute compaction). */
  continueTtlMs?: number;
  /** How a watch from a compacted resourceVersion fails: a 200 with one ERROR event, or HTTP 410. Default: `"event"`. */
  expiredWatch?: "event" | "status";
  /** Period of BOOKMARK events on watches that allow them. Default: `0` (only one as a watch times out). */
  bookmarkIntervalMs?: number;
  /** Caps every watch's duration (it then ends as at its timeout). Default: no cap. */
  maxWatchMs?: number;
  /** Watch duration when the client sends no `timeoutSeconds`. Default: `1800`. */
  defaultWatchTimeoutSeconds?: number;
  /** Support streaming lists (`sendInitialEvents=true`) like 1.27+; else answer 422 like 1.20. Default: `false`. */
  streamingList?: boolean;
  /**
   * The discovery documents served (`/api`, `/api/v1`, `/apis`,
   * `/apis/GROUP`, `/apis/GROUP/VERSION`, listing every served resource,
   * those of `resources` and `addResource` too). `"aggregated"`: as
   * Kubernetes 1.30+, the aggregated `APIGroupDiscoveryList`
   * (`apidiscovery.k8s.io` v2 or v2beta1) at `/api` and `/apis` when the
   * `Accept` header asks for it, the legacy documents otherwise.
   * `"legacy"`: only the legacy documents, as kube-apiserver 1.20 (an
   * `Accept` asking only for the aggregated form gets 406). Default:
   * `"aggregated"`.
   */
  discovery?: "aggregated" | "legacy";
  /** Accepted bearer tokens; others get 401. Default: no authentication. */
  tokens?: string[];
  /**
   * Keep connections alive between requests, as the real server does;
   * `false` answers `Connection: close` (then Node's fetch takes a
   * connection reset mid-body for the end of the body). Default: `true`.
   */
  keepAlive?: boolean;
  /**
   * Serve HTTPS with this certificate and key (PEM text) instead of plain
   * HTTP; `url` then starts with `https://`. Clients must trust the
   * certificate's issuer (a kubeconfig's `certificate-authority-data`).
   * Default: none (plain HTTP).
   */
  tls?: { cert: string; key: string };
  /**
   * With `tls`: offer HTTP/2 by ALPN (Node's `http2` module, HTTP/1.1 kept
   * for clients that do not offer h2), as kube-apiserver does; `false`:
   * offer HTTP/1.1 only. Fault injection works on both; on h2 a `reset`
   * fault resets the whole connection, every stream on it included.
   * Default: `true`.
   */
  http2?: boolean;
  /**
   * With `tls` and `http2`: the `SETTINGS_MAX_CONCURRENT_STREAMS` the
   * server advertises (kube-apiserver's `--http2-max-streams-per-connection`);
   * streams beyond it are refused. Default: Node's (unlimited).
   */
  maxConcurrentStreams?: number;
}

/**
 * The options with their defaults applied.
 */
export interface ResolvedOptions {
  port: number;
  hostname: string;
  resources: ResourceDefinition[];
  historySize: number;
  startResourceVersion: number;
  continueTtlMs: number;
  tokens: string[] | undefined;
  keepAlive: boolean;
  transport: ListenerTransport;
  behaviour: Behaviour;
}

/**
 * Applies the defaults; throws `RangeError`/`TypeError` on an invalid value.
 */
export function resolveOptions(options: FakeApiServerOptions): ResolvedOptions {
  const {
    port = 0,
    hostname = "127.0.0.1",
    resources = [],
    historySize = 1000,
    startResourceVersion = 1,
    continueTtlMs = 300_000,
    tokens,
    keepAlive = true,
    tooLargeDelayMs = 0,
    paginateResourceVersionZero = false,
    expiredWatch = "event",
    bookmarkIntervalMs = 0,
    maxWatchMs = Infinity,
    defaultWatchTimeoutSeconds = 1800,
    streamingList = false,
    discovery = "aggregated",
    tls,
    http2 = true,
    maxConcurrentStreams,
  } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`FakeApiServer: port must be an integer in [0, 65535], got ${port}`);
  }
  const counts = {
    historySize,
    startResourceVersion,
    continueTtlMs,
    tooLargeDelayMs,
    bookmarkIntervalMs,
  };
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`FakeApiServer: ${name} must be an integer >= 0, got ${value}`);
    }
  }
  if (!(maxWatchMs >= 0)) {
    throw new RangeError(`FakeApiServer: maxWatchMs must be >= 0, got ${maxWatchMs}`);
  }
  if (!(defaultWatchTimeoutSeconds > 0)) {
    throw new RangeError(
      `FakeApiServer: defaultWatchTimeoutSeconds must be > 0, got ${defaultWatchTimeoutSeconds}`,
    );
  }
  if (discovery !== "aggregated" && discovery !== "legacy") {
    throw new TypeError(
      `FakeApiServer: discovery must be "aggregated" or "legacy", got ${discovery}`,
    );
  }
  if (expiredWatch !== "event" && expiredWatch !== "status") {
    throw new TypeError(
      `FakeApiServer: expiredWatch must be "event" or "status", got ${expiredWatch}`,
    );
  }
  if (
    tls !== undefined &&
    (typeof tls !== "object" || tls === null || typeof tls.cert !== "string" ||
      typeof tls.key !== "string")
  ) {
    throw new TypeError("FakeApiServer: tls must be { cert: string; key: string } (PEM)");
  }
  if (typeof http2 !== "boolean") {
    throw new TypeError(`FakeApiServer: http2 must be a boolean, got ${typeof http2}`);
  }
  if (
    maxConcurrentStreams !== undefined &&
    (!Number.isInteger(maxConcurrentStreams) || maxConcurrentStreams < 1 ||
      maxConcurrentStreams > 2 ** 31 - 1)
  ) {
    throw new RangeError(
      `FakeApiServer: maxConcurrentStreams must be an integer in [1, 2^31-1], got ${maxConcurrentStreams}`,
    );
  }
  return {
    port,
    hostname,
    resources,
    historySize,
    startResourceVersion,
    continueTtlMs,
    tokens,
    keepAlive,
    transport: tls ? { tls, http2, maxConcurrentStreams } : { http2: false },
    behaviour: {
      tooLargeDelayMs,
      paginateResourceVersionZero,
      expiredWatch,
      bookmarkIntervalMs,
      maxWatchMs,
      defaultWatchTimeoutSeconds,
      streamingList,
      discovery,
    },
  };
}
