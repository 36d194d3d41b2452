/**
 * A fake Kubernetes API server speaking real HTTP on loopback, answering
 * the way kube-apiserver 1.20 does, with faults on demand.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import { ServerState } from "./_server_state.ts";
import { sleep } from "./_waiters.ts";
import type { FaultRule, InjectedFault } from "./fault.ts";
import type { ServerConnection } from "./server_connection.ts";
import { type FakeApiServerOptions, resolveOptions } from "./fake_api_server_options.ts";
import type {
  ObjectRef,
  ObjectsQuery,
  RecordedRequest,
  ResourceDefinition,
  WaitOptions,
} from "./types.ts";

/**
 * A fake Kubernetes API server on loopback HTTP, faithful to the
 * responses recorded from kube-apiserver 1.20 (status codes, Status
 * bodies, headers, list and watch shapes), with an etcd-like global
 * resourceVersion, a bounded watch history, pagination over snapshots,
 * bookmarks, and injectable faults. One implementation on `node:http`
 * for Node and Deno; `close()` leaves no socket or timer behind.
 *
 * Served: `GET` lists and watches (`/api/v1/...`, `/apis/GROUP/VERSION/...`,
 * all namespaces or one), `GET`, `POST`, `PUT`, `PATCH` and `DELETE` of
 * objects, with `dryRun=All` and delete preconditions; a stale
 * `metadata.resourceVersion` gives 409 Conflict. `PATCH` takes JSON merge
 * and JSON patches as the real server does; strategic merge patches and
 * server-side apply (JSON bodies, `fieldManager` required) are served as
 * merge patches (apply: create or merge), so lists are replaced, never
 * merged by key, and no field ownership or apply conflict exists.
 * Discovery documents list every served resource (see the `discovery`
 * option: the aggregated form when asked, or only the legacy forms of
 * 1.20); a verb a resource does not list in its `verbs` gets 405.
 *
 * @example Serve objects and read them back over HTTP
 * ```ts
 * import assert from "node:assert/strict";
 * import type { KubeList } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * try {
 *   server.create({
 *     apiVersion: "v1",
 *     kind: "ConfigMap",
 *     metadata: { name: "a", namespace: "fx" },
 *   });
 *   const res = await fetch(`${server.url}/api/v1/namespaces/fx/configmaps`);
 *   const list: KubeList = await res.json();
 *   assert.equal(list.kind, "ConfigMapList");
 *   assert.deepEqual(list.items.map((cm) => cm.metadata.name), ["a"]);
 *   assert.equal(list.metadata.resourceVersion, server.resourceVersion);
 *   assert.equal(server.requests.at(-1)?.verb, "list");
 * } finally {
 *   await server.close(); // no socket or timer left behind
 * }
 * ```
 */
export class FakeApiServer {
  readonly #s: ServerState;
  readonly #hostname: string;
  readonly #scheme: "http" | "https";
  #closed = false;

  private constructor(state: ServerState, hostname: string, scheme: "http" | "https") {
    this.#s = state;
    this.#hostname = hostname;
    this.#scheme = scheme;
  }

  /**
   * Starts a server; resolves once it listens.
   */
  static async start(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const resolved = resolveOptions(options);
    const scheme = resolved.transport.tls ? "https" : "http";
    const server = new FakeApiServer(new ServerState(resolved), resolved.hostname, scheme);
    server.setTokens(resolved.tokens);
    await server.#s.listener.listen(resolved.port);
    return server;
  }

  /** The base URL, `http://127.0.0.1:PORT` (`https://` with the `tls` option). */
  get url(): string {
    const host = this.#hostname.includes(":") ? `[${this.#hostname}]` : this.#hostname;
    return `${this.#scheme}://${host}:${this.#s.listener.port}`;
  }

  /** The port (the same across `goDown`/`comeUp`). */
  get port(): number {
    return this.#s.listener.port;
  }

  /** True while accepting connections (false after `goDown` or `close`). */
  get isUp(): boolean {
    return this.#s.listener.listening;
  }

  /** The current global resourceVersion, as a string. */
  get resourceVersion(): string {
    return String(this.#s.store.resourceVersion);
  }

  /** Requests received since the start or the last `clearRequests()`, oldest first. */
  get requests(): readonly RecordedRequest[] {
    return this.#s.requests;
  }

  /** Requests received since the start (a `seq` to pass as `since` to `waitForRequests`). */
  get requestCount(): number {
    return this.#s.requestCount;
  }

  /** Empties the request log (`requestCount` keeps counting). */
  clearRequests(): void {
    this.#s.requests = [];
  }

  /** Watches streaming right now. */
  get openWatches(): number {
    return this.#s.sessions.size;
  }

  /**
   * Every connection accepted since the server started, oldest first, each
   * with its protocol (`"h2"` or `"http/1.1"`), whether it is still open,
   * and its requests (see {@linkcode ServerConnection}); `waitFor`
   * conditions are checked again whenever one opens, closes or ends a
   * request. A snapshot: read it again for fresh figures.
   *
   * @example Two requests over one HTTP/1.1 connection (kept alive)
   * ```ts
   * import assert from "node:assert/strict";
   * import { FakeApiServer } from "../../testkit.ts";
   *
   * const server = await FakeApiServer.start();
   * try {
   *   for (let i = 0; i < 2; i++) await (await fetch(`${server.url}/api/v1/namespaces`)).text();
   *   const open = server.connections.filter((c) => c.open);
   *   assert.ok(open.length >= 1 && open.every((c) => c.protocol === "http/1.1"));
   *   assert.equal(server.connections.reduce((n, c) => n + c.requests, 0), 2);
   * } finally {
   *   await server.close();
   * }
   * ```
   */
  get connections(): ServerConnection[] {
    return this.#s.listener.connections;
  }

  /** Connections open right now (`connections` that are `open`). */
  get openConnections(): number {
    return this.#s.listener.connections.filter((c) => c.open).length;
  }

  /**
   * Drops every open connection abruptly (a TCP reset where the runtime
   * supports it), ending every request and watch on them (on h2, every
   * stream of each connection). The server keeps listening.
   */
  resetConnections(): void {
    this.#s.listener.resetConnections();
  }

  /**
   * Sends a graceful GOAWAY (`NO_ERROR`, last stream id: the last stream the
   * connection took) on every open h2 connection, as kube-apiserver does on
   * the requests its `--goaway-chance` filter picks, to move clients to a
   * new connection: the streams already open (watches) are still served and
   * new connections are accepted; what a client does with its open streams
   * is its own (undici closes the connection, ending them; RFC 9113 lets
   * them finish). HTTP/1.1 connections are left alone. Returns how many
   * connections got a GOAWAY (0 without the `tls` and `http2` options).
   */
  goAwayConnections(): number {
    return this.#s.listener.goAwayConnections();
  }

  /** Watches that have started streaming since the server started. */
  get watchesOpened(): number {
    return this.#s.watchesOpened;
  }

  /** Serves one more resource (see {@linkcode ResourceDefinition}); discovery lists it from now on. */
  addResource(definition: ResourceDefinition): void {
    this.#s.registry.add(definition);
  }

  /** Stores a new object (its `apiVersion` and `kind` pick the resource); returns the stored copy. Throws `KubeStatusError` 409 when it exists. */
  create(object: KubeObject | KubeObjectLike): KubeObject {
    return structuredClone(this.#s.store.create(this.#s.resourceOf(object), object as KubeObject));
  }

  /** Replaces an existing object (404 when missing; 409 when its `metadata.resourceVersion` is set and stale). */
  update(object: KubeObject | KubeObjectLike): KubeObject {
    return structuredClone(this.#s.store.update(this.#s.resourceOf(object), object as KubeObject));
  }

  /** Creates the object, or replaces it whatever its resourceVersion. */
  upsert(object: KubeObject | KubeObjectLike): KubeObject {
    const { resource, namespace, name } = this.#s.locate(object);
    if (!name || !this.#s.store.get(resource, namespace, name)) return this.create(object);
    const { resourceVersion: _rv, ...metadata } = object.metadata ?? {};
    return this.update({ ...object, metadata });
  }

  /**
   * Deletes an object; returns its last state at the deletion's
   * resourceVersion (as the DELETED event carries it). An object with
   * finalizers is only marked, as on a real server (`deletionTimestamp` set,
   * a MODIFIED event): this returns it marked, and it goes once an update
   * leaves it without finalizers.
   */
  delete(ref: ObjectRef | KubeObject | KubeObjectLike): KubeObject {
    const { resource, namespace, name } = this.#s.locate(ref);
    return structuredClone(this.#s.store.delete(resource, namespace, name).object);
  }

  /** The stored object, or undefined. */
  get(ref: ObjectRef | KubeObject | KubeObjectLike): KubeObject | undefined {
    const { resource, namespace, name } = this.#s.locate(ref);
    const object = this.#s.store.get(resource, namespace, name);
    return object && structuredClone(object);
  }

  /** The current objects of a resource, sorted by namespace and name (copies). */
  objects(query: ObjectsQuery): KubeObject[] {
    const resource = this.#s.registry.byName(query.resource, query.group);
    if (!resource) throw new TypeError(`FakeApiServer: unknown resource ${query.resource}`);
    return structuredClone(this.#s.store.list(resource, query.namespace));
  }

  /**
   * Adds a fault rule (see {@linkcode FaultRule}); rules are tried in order.
   *
   * @example A reflector relists after a 410 ERROR event
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   Indexer,
   *   isExpired,
   *   KubeClient,
   *   metaNamespaceKeyFunc,
   *   Reflector,
   *   resourceListerWatcher,
   * } from "../../mod.ts";
   * import { FakeApiServer } from "../../testkit.ts";
   *
   * const server = await FakeApiServer.start();
   * const gone = server.inject({ verb: "watch", fault: { kind: "error-event", code: 410 } });
   * const client = new KubeClient({ server: server.url });
   * const lw = resourceListerWatcher(client, { apiVersion: "v1", resource: "configmaps" });
   * const errors: unknown[] = [];
   * const reflector = new Reflector(lw, new Indexer(metaNamespaceKeyFunc), {
   *   useStreamingList: false,
   *   backoff: { initialMs: 10 }, // a 410 right after the list waits the backoff before relisting
   *   onError: (err) => errors.push(err),
   * });
   * const ac = new AbortController();
   * const done = reflector.run({ signal: ac.signal });
   * await server.waitForRequests((r) => r.verb === "list", { count: 2 }); // the relist
   * assert.equal(gone.fired, 1);
   * assert.ok(errors.some(isExpired));
   * ac.abort();
   * await done;
   * await server.close();
   * ```
   */
  inject(rule: FaultRule): InjectedFault {
    const injected = this.#s.faults.add(rule);
    if (this.#s.faults.armsRequestTimeReset) this.#s.listener.closeIdleConnections();
    return injected;
  }

  /** Removes every fault rule. */
  clearFaults(): void {
    this.#s.faults.clear();
  }

  /** Replaces the accepted bearer tokens (`undefined`: accept every request). */
  setTokens(tokens: readonly string[] | undefined): void {
    if (tokens && tokens.some((t) => typeof t !== "string" || t === "")) {
      throw new TypeError("FakeApiServer: tokens must be non-empty strings");
    }
    this.#s.tokens = tokens ? new Set(tokens) : undefined;
  }

  /** Drops the whole change history: watches and exact lists from older versions get 410. */
  compact(): void {
    this.#s.store.compact();
  }

  /**
   * Simulates an API server restart's watch cache: watches from any older
   * version now get 410 (an ERROR event, or HTTP 410 with
   * `expiredWatch: "status"`), while exact lists at older versions still
   * succeed from "etcd" until `compact()`. Open watches are not ended; call
   * `endWatches()` for that.
   */
  restartWatchCache(): void {
    this.#s.store.restartWatchCache();
  }

  /** Expires every outstanding continue token (the next page answers 410). */
  expireContinueTokens(): void {
    this.#s.snapshots.expireAll();
  }

  /** Ends every open watch cleanly, as an API server restart does. */
  endWatches(): void {
    for (const session of [...this.#s.sessions]) session.end(false);
  }

  /** Stops listening and drops every connection (clients get connection refused). */
  async goDown(): Promise<void> {
    for (const session of [...this.#s.sessions]) session.destroy();
    await this.#s.listener.stop();
  }

  /** Listens again on the same port. */
  async comeUp(): Promise<void> {
    if (this.#closed) throw new Error("FakeApiServer: closed");
    if (!this.#s.listener.listening) await this.#s.listener.listen(this.#s.listener.port);
  }

  /** Goes down, waits `ms` (cut short by `close()`), comes back up on the same port. */
  async refuseConnections(ms: number): Promise<void> {
    await this.goDown();
    await sleep(ms, this.#s.closing.signal);
    if (!this.#closed) await this.comeUp();
  }

  /**
   * Resolves when `condition()` holds; it is checked now and after every
   * request, watch start or end, and write.
   */
  waitFor(condition: () => boolean, options?: WaitOptions): Promise<void> {
    return this.#s.waiters.wait(condition, "a condition", options);
  }

  /** Resolves once `count` watches (default 1) have started streaming since the server started. */
  waitForWatch(options: WaitOptions & { count?: number } = {}): Promise<void> {
    const { count = 1 } = options;
    return this.#s.waiters.wait(
      () => this.#s.watchesOpened >= count,
      `${count} watch(es)`,
      options,
    );
  }

  /**
   * Resolves with the logged requests matching `predicate` (with `seq`
   * above `since`, default 0) once there are `count` (default 1).
   */
  async waitForRequests(
    predicate: (request: RecordedRequest) => boolean,
    options: WaitOptions & { count?: number; since?: number } = {},
  ): Promise<RecordedRequest[]> {
    const { count = 1, since = 0 } = options;
    const matching = () => this.#s.requests.filter((r) => r.seq > since && predicate(r));
    await this.#s.waiters.wait(() => matching().length >= count, `${count} request(s)`, options);
    return matching();
  }

  /** Stops everything: listener, connections, watches, timers, pending waits (rejected). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#s.closing.abort();
    this.#s.waiters.rejectAll(new Error("FakeApiServer closed"));
    for (const session of [...this.#s.sessions]) session.destroy();
    await this.#s.listener.stop();
  }
}
