/**
 * The API server's resources, read once and resolved the way kubectl
 * resolves resource names.
 *
 * @module
 */
import { abortable } from "../async/_abortable.ts";
import { type Clock, systemClock } from "../async/clock.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import type { ApiResource, DiscoveryFailure } from "./api_resource.ts";
import { closestNames } from "./_closest_names.ts";
import { findResource } from "./_find_resource.ts";
import { readDiscovery } from "./_read_discovery.ts";
import { ResourceVerbError } from "./resource_verb_error.ts";
import { UnknownResourceError } from "./unknown_resource_error.ts";

/**
 * Options of {@linkcode ApiDiscovery} (and of `discover`).
 */
export interface ApiDiscoveryOptions {
  /**
   * The shortest time between two refreshes that a miss of
   * {@linkcode ApiDiscovery.resolve} starts (a name the server may have
   * gained since: a CRD created after the discovery). `Infinity`: a miss
   * never refreshes. Explicit `refresh()` calls are not limited. Default:
   * `30_000`.
   */
  refreshIntervalMs?: number;
  /** The clock of `refreshIntervalMs` (tests pass a `ManualClock`). Default: the system clock. */
  clock?: Clock;
}

/** The defaults of {@linkcode ApiDiscoveryOptions}. */
export const API_DISCOVERY_DEFAULTS: Readonly<{ refreshIntervalMs: number }> = Object.freeze({
  refreshIntervalMs: 30_000,
});

/** Options of {@linkcode ApiDiscovery.resolve}. */
export interface ResolveOptions {
  /** Aborts the refresh a miss starts; rejects with `signal.reason`. Default: none. */
  signal?: AbortSignal;
  /**
   * A verb the resource must serve (`"watch"`, `"list"`, `"create"`...):
   * else a {@linkcode ResourceVerbError}. Default: none.
   */
  verb?: string;
}

interface Refresh {
  promise: Promise<void>;
  signal?: AbortSignal;
}

/**
 * The resources an API server serves, read from its discovery documents:
 * aggregated discovery (`/api` and `/apis` as `APIGroupDiscoveryList`,
 * Kubernetes 1.26+) when the server has it, else the legacy documents of
 * every group version (1.20). Names resolve as kubectl resolves them
 * (see {@linkcode ApiDiscovery.find}). Usually made by `discover(client)`,
 * which caches one per client; a new one is empty until its first
 * `refresh()` (or the first `resolve()`, whose miss loads it).
 *
 * A group version whose document fails (an aggregated API that is down
 * answers 503, or is listed as stale) is left out and reported in
 * {@linkcode ApiDiscovery.failedGroups}, as kubectl warns and goes on.
 *
 * @example Resolve kubectl's names, then reflect what they name
 * ```ts
 * import assert from "node:assert/strict";
 * import { discover, KubeClient, resourceClient, UnknownResourceError } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const client = new KubeClient({ server: server.url });
 * const api = await discover(client);
 * const deploy = await api.resolve("deploy");
 * assert.equal(deploy.apiVersion, "apps/v1");
 * assert.equal(deploy.resource, "deployments");
 * assert.equal(api.find("Deployment.apps"), deploy);
 * assert.equal(api.find("ns")?.namespaced, false);
 * await resourceClient(client, { ...deploy, namespace: "prod" }).create({
 *   apiVersion: "apps/v1",
 *   kind: "Deployment",
 *   metadata: { name: "web" },
 * });
 * await assert.rejects(api.resolve("deplyo"), (err) => {
 *   assert.ok(err instanceof UnknownResourceError);
 *   assert.deepEqual(err.suggestions, ["deploy", "deployments"]);
 *   return true;
 * });
 * await server.close();
 * ```
 */
export class ApiDiscovery {
  readonly #client: KubeClient;
  readonly #refreshIntervalMs: number;
  readonly #clock: Clock;
  #resources: readonly ApiResource[] = Object.freeze([]);
  #failed: readonly DiscoveryFailure[] = Object.freeze([]);
  #form: "aggregated" | "legacy" | undefined;
  /** When the last refresh a miss may count started (by the clock). */
  #lastRefreshAt = -Infinity;
  #started = 0;
  #applied = 0;
  #inFlight: Refresh | undefined;

  /**
   * An empty discovery of `client`'s server (see `discover` for a loaded,
   * cached one).
   *
   * @throws {TypeError} when `client` is missing or an option has the wrong type.
   * @throws {RangeError} when `refreshIntervalMs` is negative or NaN.
   */
  constructor(client: KubeClient, options: ApiDiscoveryOptions = {}) {
    if (client === null || typeof client !== "object" || typeof client.requestJson !== "function") {
      throw new TypeError("ApiDiscovery: client must be a KubeClient");
    }
    const {
      refreshIntervalMs = API_DISCOVERY_DEFAULTS.refreshIntervalMs,
      clock = systemClock,
    } = options ?? {};
    if (typeof refreshIntervalMs !== "number") {
      throw new TypeError(
        `ApiDiscovery: refreshIntervalMs must be a number, got ${refreshIntervalMs}`,
      );
    }
    if (!(refreshIntervalMs >= 0)) {
      throw new RangeError(
        `ApiDiscovery: refreshIntervalMs must be >= 0, got ${refreshIntervalMs}`,
      );
    }
    if (clock === null || typeof clock !== "object" || typeof clock.now !== "function") {
      throw new TypeError("ApiDiscovery: clock must be a Clock");
    }
    this.#client = client;
    this.#refreshIntervalMs = refreshIntervalMs;
    this.#clock = clock;
  }

  /**
   * Every resource of every group, in kubectl's priority order: the core
   * group first, then the groups as the server lists them, each group's
   * preferred version first (other versions follow it).
   */
  get resources(): readonly ApiResource[] {
    return this.#resources;
  }

  /** The group versions the last refresh could not read (empty when all were read). */
  get failedGroups(): readonly DiscoveryFailure[] {
    return this.#failed;
  }

  /**
   * The form the server answered in at the last refresh: `"aggregated"`
   * (one `APIGroupDiscoveryList` for `/apis`) or `"legacy"` (a document
   * per group version); `undefined` before the first.
   */
  get form(): "aggregated" | "legacy" | undefined {
    return this.#form;
  }

  /**
   * The resource `name` names, as kubectl resolves it, from what is
   * known (no request): a plural, singular or short name (`pods`, `pod`,
   * `po`), a kind in any case (`Deployment`), each optionally qualified by
   * group (`deployments.apps`, `deploy.apps`, `Deployment.apps`) or by
   * version and group (`deployments.v1.apps`, `Deployment.v1.apps`,
   * `pods.v1.` for the core group). Exact plural and singular names win
   * over short names, names over kinds; on a tie, the core group wins,
   * then the groups in the server's order; a group's preferred version
   * wins over its others.
   */
  find(name: string): ApiResource | undefined {
    return findResource(this.#resources, name);
  }

  /**
   * The closest names to `name` the server has (plural and short names of
   * the resources with a name close to it), best first; for "did you
   * mean" hints.
   */
  suggest(name: string): string[] {
    const names: string[] = [];
    const owners: ApiResource[] = [];
    for (const r of this.#resources) {
      for (const n of [r.resource, r.singular, ...r.shortNames, r.kind]) {
        names.push(n);
        owners.push(r);
      }
    }
    const close = closestNames(name, names, names.length);
    const seen = new Set<ApiResource>();
    const suggestions: string[] = [];
    for (const n of close) {
      const owner = owners[names.findIndex((x) => x.toLowerCase() === n.toLowerCase())];
      if (seen.has(owner)) continue;
      seen.add(owner);
      for (const s of [...owner.shortNames, owner.resource]) {
        if (!suggestions.includes(s)) suggestions.push(s);
      }
    }
    return suggestions.slice(0, 6);
  }

  /**
   * {@linkcode ApiDiscovery.find}, and on a miss, one refresh (when none
   * started within `refreshIntervalMs`, or joining one under way) and
   * `find` again. Rejects with an {@linkcode UnknownResourceError} (with
   * the closest names, and the group versions the discovery could not
   * read, which the name may belong to) when the name is still unknown, with a
   * {@linkcode ResourceVerbError} when `options.verb` is given and the
   * resource does not serve it, with the refresh's typed error
   * (`KubeStatusError`, `KubeNetworkError`) when it fails, and with
   * `signal.reason` on abort.
   */
  async resolve(name: string, options: ResolveOptions = {}): Promise<ApiResource> {
    const { signal, verb } = options;
    signal?.throwIfAborted();
    if (typeof name !== "string") {
      throw new TypeError(`ApiDiscovery.resolve: name must be a string, got ${typeof name}`);
    }
    if (verb !== undefined && typeof verb !== "string") {
      throw new TypeError(`ApiDiscovery.resolve: verb must be a string, got ${typeof verb}`);
    }
    let found = this.find(name);
    if (!found) {
      await this.#refreshOnMiss(signal);
      found = this.find(name);
    }
    if (!found) throw new UnknownResourceError(name, this.suggest(name), this.#failed);
    if (verb !== undefined && !found.verbs.includes(verb)) {
      throw new ResourceVerbError(found, verb);
    }
    return found;
  }

  /**
   * Reads the server's discovery again and replaces what is known (a
   * failure keeps it, and rejects with the request's typed error).
   * Concurrent refreshes each read; the one started last wins.
   */
  refresh(options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options;
    const seq = ++this.#started;
    this.#lastRefreshAt = this.#clock.now();
    const promise = (async () => {
      signal?.throwIfAborted();
      const found = await readDiscovery(this.#client, signal);
      if (seq < this.#applied) return;
      this.#applied = seq;
      this.#resources = Object.freeze(found.resources);
      this.#failed = Object.freeze(found.failures);
      this.#form = found.form;
    })();
    const refresh: Refresh = { promise, signal };
    this.#inFlight = refresh;
    const clear = () => {
      if (this.#inFlight === refresh) this.#inFlight = undefined;
    };
    promise.then(clear, clear);
    return promise;
  }

  async #refreshOnMiss(signal: AbortSignal | undefined): Promise<void> {
    const inFlight = this.#inFlight;
    if (inFlight) {
      try {
        return await abortable(inFlight.promise, signal);
      } catch (err) {
        signal?.throwIfAborted();
        // another caller's abort ended it: read for ourselves
        if (!inFlight.signal?.aborted) throw err;
      }
    } else if (this.#clock.now() - this.#lastRefreshAt < this.#refreshIntervalMs) {
      return;
    }
    await this.refresh({ signal });
  }
}
