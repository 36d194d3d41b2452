/**
 * One informer per resource and selector, shared by every consumer.
 *
 * @module
 */
import type { KubeObject } from "../api/types.ts";
import type { ErrorHandler } from "../reflector/watcher_options.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import {
  resourceListerWatcher,
  type ResourceListerWatcherOptions,
} from "../transport/resource_lister_watcher.ts";
import { Informer } from "./informer.ts";
import type { InformerOptions } from "./informer_options.ts";
import { waitForCacheSync } from "./wait_for_cache_sync.ts";

/**
 * Which objects an informer of a {@linkcode SharedInformerFactory} watches (its sharing key).
 */
export type InformerResource = Pick<
  ResourceListerWatcherOptions,
  "apiVersion" | "resource" | "namespace" | "labelSelector" | "fieldSelector" | "metadataOnly"
>;

/**
 * Options of {@linkcode SharedInformerFactory}.
 */
export interface SharedInformerFactoryOptions {
  /** The client every informer lists and watches through. Required unless `listerWatcher` is given. */
  client?: KubeClient;
  /** Makes the ListerWatcher of a resource. Default: `resourceListerWatcher(client, resource)`. */
  listerWatcher?: (resource: InformerResource) => ListerWatcher;
  /** Options of every informer (each `informerFor` call may add its own). Default: `{}`. */
  defaults?: Omit<InformerOptions<KubeObject>, "name" | "transform" | "keyFunc" | "indexers">;
}

/**
 * Hands out one {@linkcode Informer} per resource, namespace and selectors,
 * however many consumers ask (client-go's `SharedInformerFactory`), and
 * runs them all with one `AbortSignal`. Informers asked for after `start()`
 * start at once. The options of the first `informerFor` call for a resource
 * win; later callers share that informer and add their own handlers.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { KubeClient, SharedInformerFactory } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start({ streamingList: true });
 * server.create({
 *   apiVersion: "v1",
 *   kind: "Pod",
 *   metadata: { name: "web-1", namespace: "prod", labels: { app: "web" } },
 * });
 * const factory = new SharedInformerFactory({ client: new KubeClient({ server: server.url }) });
 * const pods = factory.informerFor({ apiVersion: "v1", resource: "pods" }, {
 *   expectedKind: "Pod",
 * });
 * const added: string[] = [];
 * pods.addEventHandler({ onAdd: (pod) => void added.push(pod.metadata.name!) });
 * // another part of the program asks for the same resource: the same informer, one watch
 * assert.equal(factory.informerFor({ apiVersion: "v1", resource: "pods" }), pods);
 * factory.informerFor({ apiVersion: "v1", resource: "configmaps", namespace: "prod" });
 * const ac = new AbortController();
 * const done = factory.start({ signal: ac.signal });
 * assert.ok(await factory.waitForCacheSync(ac.signal));
 * assert.equal(pods.lister().list({ labelSelector: "app=web" }).length, 1);
 * ac.abort();
 * await done;
 * assert.deepEqual(added, ["web-1"]);
 * await server.close();
 * ```
 */
export class SharedInformerFactory {
  readonly #makeLw: (resource: InformerResource) => ListerWatcher;
  readonly #defaults: Omit<InformerOptions<KubeObject>, "name">;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #runs: Promise<void>[] = [];
  #signal: AbortSignal | undefined;

  /**
   * Creates a factory holding no informer yet.
   *
   * @throws {TypeError} when neither `client` nor `listerWatcher` is given.
   */
  constructor(options: SharedInformerFactoryOptions) {
    const { client, listerWatcher, defaults = {} } = options ?? {};
    if (listerWatcher !== undefined && typeof listerWatcher !== "function") {
      throw new TypeError("SharedInformerFactory: listerWatcher must be a function");
    }
    if (!listerWatcher && !client) {
      throw new TypeError("SharedInformerFactory: client or listerWatcher is required");
    }
    this.#makeLw = listerWatcher ?? ((r) => resourceListerWatcher(client!, r));
    this.#defaults = defaults;
  }

  /** Every informer handed out so far. */
  get informers(): Informer<KubeObject>[] {
    return [...this.#informers.values()];
  }

  /**
   * The shared informer of `resource`, created on first request. Its name
   * (metrics label) defaults to `resource`, or `resource.namespace`.
   */
  informerFor<T extends KubeObject = KubeObject>(
    resource: InformerResource,
    options: InformerOptions<T> = {},
  ): Informer<T> {
    if (!resource?.apiVersion || !resource.resource) {
      throw new TypeError(
        "SharedInformerFactory.informerFor: apiVersion and resource are required",
      );
    }
    const { apiVersion, resource: plural, namespace = "", labelSelector = "", fieldSelector = "" } =
      resource;
    const key = JSON.stringify([
      apiVersion,
      plural,
      namespace,
      labelSelector,
      fieldSelector,
      !!resource.metadataOnly,
    ]);
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      // Informers of the same resource that differ by selectors get distinct
      // default names (so their metrics series stay apart): a short stable hash.
      const base = namespace ? `${plural}.${namespace}` : plural;
      const variant = labelSelector || fieldSelector || resource.metadataOnly
        ? `#${fnv1a(`${labelSelector}|${fieldSelector}|${!!resource.metadataOnly}`)}`
        : "";
      const name = options.name ?? base + variant;
      const lw = this.#makeLw(resource) as ListerWatcher<T>;
      informer = new Informer<T>(lw, { ...this.#defaults, ...options, name } as InformerOptions<T>);
      this.#informers.set(key, informer as unknown as Informer<KubeObject>);
      if (this.#signal) this.#launch(informer as unknown as Informer<KubeObject>, this.#signal);
    }
    return informer;
  }

  /**
   * Runs every informer, present and future, until `signal` aborts; then
   * resolves once all have stopped. Call it once.
   */
  async start(options: { signal: AbortSignal }): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      throw new TypeError("SharedInformerFactory.start: options.signal is required");
    }
    if (this.#signal) throw new Error("SharedInformerFactory: start() was already called");
    this.#signal = signal;
    for (const informer of this.#informers.values()) this.#launch(informer, signal);
    if (!signal.aborted) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    }
    await Promise.all(this.#runs);
  }

  /** {@linkcode waitForCacheSync} over every informer handed out so far. */
  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    return waitForCacheSync(signal, ...this.#informers.values());
  }

  #launch(informer: Informer<KubeObject>, signal: AbortSignal): void {
    const report: ErrorHandler = this.#defaults.onError ??
      ((err) =>
        console.error(`[${informer.name}] stopped: ${err instanceof Error ? err.message : err}`));
    this.#runs.push(
      informer.run({ signal }).catch((err) => {
        try {
          report(err, "watch");
        } catch { /* ignored */ }
      }),
    );
  }
}

/** FNV-1a 32-bit hash as 8 hex digits: short, stable names for selector variants. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
