/**
 * A fake Kubernetes API server speaking real HTTP on loopback, answering
 * the way kube-apiserver 1.20 does, with faults on demand.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { Behaviour, ServerContext } from "./_context.ts";
import { ContinueSnapshots } from "./_continue_snapshots.ts";
import { FaultRules } from "./_fault_rules.ts";
import { handleRequest } from "./_handler.ts";
import { Listener } from "./_listener.ts";
import { ObjectStore } from "./_object_store.ts";
import { DEFAULT_RESOURCES, type Resource, ResourceRegistry } from "./_resources.ts";
import { Waiters } from "./_waiters.ts";
import type { WatchSession } from "./_watch_session.ts";
import type { FaultRule, InjectedFault } from "./fault.ts";
import type {
  ObjectRef,
  ObjectsQuery,
  RecordedRequest,
  ResourceDefinition,
  WaitOptions,
} from "./types.ts";

/** Options of {@linkcode FakeApiServer.start}. */
export interface FakeApiServerOptions {
  /** Port to listen on. Default: `0` (a free port). */
  port?: number;
  /** Address to listen on. Default: `"127.0.0.1"`. */
  hostname?: string;
  /** Resources served besides the defaults (configmaps, secrets, pods, namespaces, deployments). Default: `[]`. */
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
  /** Accepted bearer tokens; others get 401. Default: no authentication. */
  tokens?: string[];
  /** Keep connections alive between requests (else `Connection: close`). Default: `true`. */
  keepAlive?: boolean;
}

/**
 * A fake Kubernetes API server on loopback HTTP, faithful to the
 * responses recorded from kube-apiserver 1.20 (status codes, Status
 * bodies, headers, list and watch shapes), with an etcd-like global
 * resourceVersion, a bounded watch history, pagination over snapshots,
 * bookmarks, and injectable faults. One implementation on `node:http`
 * for Node and Deno; `close()` leaves no socket or timer behind.
 *
 * Served: `GET` lists and watches (`/api/v1/...`, `/apis/GROUP/VERSION/...`,
 * all namespaces or one), `GET`, `POST`, `PUT` and `DELETE` of objects.
 *
 * @example
 * ```ts
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * try {
 *   server.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "fx" } });
 *   const res = await fetch(`${server.url}/api/v1/namespaces/fx/configmaps`);
 *   const list = await res.json();
 *   console.log(list.items.length, list.metadata.resourceVersion); // 1 "2"
 *   server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
 * } finally {
 *   await server.close();
 * }
 * ```
 */
export class FakeApiServer {
  readonly #registry: ResourceRegistry;
  readonly #store: ObjectStore;
  readonly #snapshots: ContinueSnapshots;
  readonly #faults = new FaultRules();
  readonly #waiters = new Waiters();
  readonly #sessions = new Set<WatchSession>();
  readonly #closing = new AbortController();
  readonly #listener: Listener;
  readonly #hostname: string;
  #requests: RecordedRequest[] = [];
  #seq = 0;
  #watchesOpened = 0;
  #tokens: Set<string> | undefined;
  #closed = false;

  private constructor(options: FakeApiServerOptions) {
    const {
      hostname = "127.0.0.1",
      resources = [],
      historySize = 1000,
      startResourceVersion = 1,
      continueTtlMs = 300_000,
      keepAlive = true,
      tokens,
    } = options;
    const behaviour = resolveBehaviour(options);
    checkCount("historySize", historySize);
    checkCount("startResourceVersion", startResourceVersion);
    checkCount("continueTtlMs", continueTtlMs);
    this.#hostname = hostname;
    this.#registry = new ResourceRegistry([...DEFAULT_RESOURCES, ...resources]);
    this.#store = new ObjectStore({ historySize, startResourceVersion });
    this.#snapshots = new ContinueSnapshots(continueTtlMs);
    this.#store.subscribe(() => this.#waiters.notify());
    this.setTokens(tokens);
    const ctx: ServerContext = {
      behaviour,
      registry: this.#registry,
      store: this.#store,
      snapshots: this.#snapshots,
      watchStarted: (session) => {
        this.#sessions.add(session);
        this.#watchesOpened++;
        this.#waiters.notify();
      },
      watchEnded: (session) => {
        this.#sessions.delete(session);
        this.#waiters.notify();
      },
    };
    const deps = {
      ctx,
      faults: this.#faults,
      keepAlive,
      tokens: () => this.#tokens,
      record: (request: RecordedRequest) => {
        request.seq = ++this.#seq;
        this.#requests.push(request);
        this.#waiters.notify();
      },
      closing: this.#closing.signal,
    };
    this.#listener = new Listener(hostname, (req, res) => handleRequest(deps, req, res));
  }

  /**
   * Starts a server; resolves once it listens.
   *
   * @example
   * ```ts
   * import { FakeApiServer } from "../../testkit.ts";
   * const server = await FakeApiServer.start({ maxWatchMs: 2_000, tokens: ["t0k3n"] });
   * console.log(server.url); // http://127.0.0.1:PORT
   * await server.close();
   * ```
   */
  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const { port = 0 } = options;
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new RangeError(`FakeApiServer: port must be an integer in [0, 65535], got ${port}`);
    }
    const server = new FakeApiServer(options);
    await server.#listener.listen(port);
    return server;
  }

  /** The base URL, `http://127.0.0.1:PORT`. */
  get url(): string {
    const host = this.#hostname.includes(":") ? `[${this.#hostname}]` : this.#hostname;
    return `http://${host}:${this.#listener.port}`;
  }

  /** The port (the same across `goDown`/`comeUp`). */
  get port(): number {
    return this.#listener.port;
  }

  /** True while accepting connections (false after `goDown` or `close`). */
  get isUp(): boolean {
    return this.#listener.listening;
  }

  /** The current global resourceVersion, as a string. */
  get resourceVersion(): string {
    return String(this.#store.resourceVersion);
  }

  /** Requests received since the start or the last `clearRequests()`, oldest first. */
  get requests(): readonly RecordedRequest[] {
    return this.#requests;
  }

  /** Requests received since the start (a `seq` to pass as `since` to `waitForRequests`). */
  get requestCount(): number {
    return this.#seq;
  }

  /** Empties the request log (`requestCount` keeps counting). */
  clearRequests(): void {
    this.#requests = [];
  }

  /** Watches streaming right now. */
  get openWatches(): number {
    return this.#sessions.size;
  }

  /** Watches that have started streaming since the server started. */
  get watchesOpened(): number {
    return this.#watchesOpened;
  }

  /** Serves one more resource (see {@linkcode ResourceDefinition}). */
  addResource(definition: ResourceDefinition): void {
    this.#registry.add(definition);
  }

  /** Stores a new object (its `apiVersion` and `kind` pick the resource); returns the stored copy. Throws `KubeStatusError` 409 when it exists. */
  create(object: KubeObject): KubeObject {
    return structuredClone(this.#store.create(this.#resourceOf(object), object));
  }

  /** Replaces an existing object (404 when missing; 409 when its `metadata.resourceVersion` is set and stale). */
  update(object: KubeObject): KubeObject {
    return structuredClone(this.#store.update(this.#resourceOf(object), object));
  }

  /** Creates the object, or replaces it whatever its resourceVersion. */
  upsert(object: KubeObject): KubeObject {
    const resource = this.#resourceOf(object);
    const { namespace, name = "" } = object.metadata ?? {};
    if (
      !name ||
      !this.#store.get(resource, resource.namespaced ? namespace || "default" : undefined, name)
    ) {
      return this.create(object);
    }
    const { resourceVersion: _rv, ...metadata } = object.metadata;
    return this.update({ ...object, metadata });
  }

  /** Deletes an object; returns its last state at the deletion's resourceVersion (as the DELETED event carries it). */
  delete(ref: ObjectRef | KubeObject): KubeObject {
    const { resource, namespace, name } = this.#locate(ref);
    return structuredClone(this.#store.delete(resource, namespace, name));
  }

  /** The stored object, or undefined. */
  get(ref: ObjectRef | KubeObject): KubeObject | undefined {
    const { resource, namespace, name } = this.#locate(ref);
    const object = this.#store.get(resource, namespace, name);
    return object && structuredClone(object);
  }

  /** The current objects of a resource, sorted by namespace and name (copies). */
  objects(query: ObjectsQuery): KubeObject[] {
    const resource = this.#registry.byName(query.resource, query.group);
    if (!resource) throw new TypeError(`FakeApiServer: unknown resource ${query.resource}`);
    return structuredClone(this.#store.list(resource, query.namespace));
  }

  /**
   * Adds a fault rule (see {@linkcode FaultRule}); rules are tried in order.
   *
   * @example
   * ```ts
   * import { FakeApiServer } from "../../testkit.ts";
   * const server = await FakeApiServer.start();
   * server.inject({ verb: "list", fault: { kind: "status", code: 429, retryAfterSeconds: 1 } });
   * server.inject({ verb: "watch", times: Infinity, fault: { kind: "chunked", chunkSize: 1 } });
   * await server.close();
   * ```
   */
  inject(rule: FaultRule): InjectedFault {
    return this.#faults.add(rule);
  }

  /** Removes every fault rule. */
  clearFaults(): void {
    this.#faults.clear();
  }

  /** Replaces the accepted bearer tokens (`undefined`: accept every request). */
  setTokens(tokens: readonly string[] | undefined): void {
    if (tokens && tokens.some((t) => typeof t !== "string" || t === "")) {
      throw new TypeError("FakeApiServer: tokens must be non-empty strings");
    }
    this.#tokens = tokens ? new Set(tokens) : undefined;
  }

  /** Drops the whole change history: watches and exact lists from older versions get 410. */
  compact(): void {
    this.#store.compact();
  }

  /** Expires every outstanding continue token (the next page answers 410). */
  expireContinueTokens(): void {
    this.#snapshots.expireAll();
  }

  /** Ends every open watch cleanly, as an API server restart does. */
  endWatches(): void {
    for (const session of [...this.#sessions]) session.end(false);
  }

  /** Stops listening and drops every connection (clients get connection refused). */
  async goDown(): Promise<void> {
    for (const session of [...this.#sessions]) session.destroy();
    await this.#listener.stop();
  }

  /** Listens again on the same port. */
  async comeUp(): Promise<void> {
    if (this.#closed) throw new Error("FakeApiServer: closed");
    if (!this.#listener.listening) await this.#listener.listen(this.#listener.port);
  }

  /** Goes down, waits `ms` (cut short by `close()`), comes back up on the same port. */
  async refuseConnections(ms: number): Promise<void> {
    await this.goDown();
    await sleep(ms, this.#closing.signal);
    if (!this.#closed) await this.comeUp();
  }

  /**
   * Resolves when `condition()` holds; it is checked now and after every
   * request, watch start or end, and write.
   *
   * @example
   * ```ts
   * import { FakeApiServer } from "../../testkit.ts";
   * const server = await FakeApiServer.start();
   * await server.waitFor(() => server.openWatches === 0, { timeoutMs: 1_000 });
   * await server.close();
   * ```
   */
  waitFor(condition: () => boolean, options?: WaitOptions): Promise<void> {
    return this.#waiters.wait(condition, "a condition", options);
  }

  /** Resolves once `count` watches (default 1) have started streaming since the server started. */
  waitForWatch(options: WaitOptions & { count?: number } = {}): Promise<void> {
    const { count = 1 } = options;
    return this.#waiters.wait(() => this.#watchesOpened >= count, `${count} watch(es)`, options);
  }

  /**
   * Resolves with the logged requests matching `predicate` (with `seq`
   * above `since`, default 0) once there are `count` (default 1).
   *
   * @example
   * ```ts
   * import { FakeApiServer } from "../../testkit.ts";
   * const server = await FakeApiServer.start();
   * const since = server.requestCount;
   * const waiting = server.waitForRequests((r) => r.verb === "list", { since, timeoutMs: 2_000 });
   * const res = await fetch(`${server.url}/api/v1/configmaps`);
   * await res.body?.cancel();
   * const [list] = await waiting;
   * console.log(list.path); // /api/v1/configmaps
   * await server.close();
   * ```
   */
  async waitForRequests(
    predicate: (request: RecordedRequest) => boolean,
    options: WaitOptions & { count?: number; since?: number } = {},
  ): Promise<RecordedRequest[]> {
    const { count = 1, since = 0 } = options;
    const matching = () => this.#requests.filter((r) => r.seq > since && predicate(r));
    await this.#waiters.wait(() => matching().length >= count, `${count} request(s)`, options);
    return matching();
  }

  /** Stops everything: listener, connections, watches, timers, pending waits (rejected). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#waiters.rejectAll(new Error("FakeApiServer closed"));
    for (const session of [...this.#sessions]) session.destroy();
    await this.#listener.stop();
  }

  #resourceOf(object: KubeObject): Resource {
    const resource = this.#registry.byKind(object?.apiVersion, object?.kind);
    if (!resource) {
      throw new TypeError(
        `FakeApiServer: no resource serves ${object?.apiVersion} ${object?.kind}`,
      );
    }
    return resource;
  }

  #locate(ref: ObjectRef | KubeObject): { resource: Resource; namespace?: string; name: string } {
    const resource = this.#resourceOf(ref as KubeObject);
    const source = "metadata" in ref && ref.metadata ? ref.metadata : (ref as ObjectRef);
    const namespace = resource.namespaced ? source.namespace || "default" : undefined;
    return { resource, namespace, name: source.name ?? "" };
  }
}

function resolveBehaviour(options: FakeApiServerOptions): Behaviour {
  const {
    tooLargeDelayMs = 0,
    paginateResourceVersionZero = false,
    expiredWatch = "event",
    bookmarkIntervalMs = 0,
    maxWatchMs = Infinity,
    defaultWatchTimeoutSeconds = 1800,
    streamingList = false,
  } = options;
  checkCount("tooLargeDelayMs", tooLargeDelayMs);
  checkCount("bookmarkIntervalMs", bookmarkIntervalMs);
  if (!(maxWatchMs >= 0)) {
    throw new RangeError(`FakeApiServer: maxWatchMs must be >= 0, got ${maxWatchMs}`);
  }
  if (!(defaultWatchTimeoutSeconds > 0)) {
    throw new RangeError(
      `FakeApiServer: defaultWatchTimeoutSeconds must be > 0, got ${defaultWatchTimeoutSeconds}`,
    );
  }
  if (expiredWatch !== "event" && expiredWatch !== "status") {
    throw new TypeError(
      `FakeApiServer: expiredWatch must be "event" or "status", got ${expiredWatch}`,
    );
  }
  return {
    tooLargeDelayMs,
    paginateResourceVersionZero,
    expiredWatch,
    bookmarkIntervalMs,
    maxWatchMs,
    defaultWatchTimeoutSeconds,
    streamingList,
  };
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`FakeApiServer: ${name} must be an integer >= 0, got ${value}`);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no timer behind. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
