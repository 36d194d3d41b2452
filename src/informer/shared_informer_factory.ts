/**
 * One informer per resource and selector, shared by every consumer.
 *
 * @module
 */
import type { KubeObject, KubeObjectLike } from "../api/types.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import type { ListerWatcher } from "../transport/lister_watcher.ts";
import {
  resourceListerWatcher,
  type ResourceListerWatcherOptions,
} from "../transport/resource_lister_watcher.ts";
import { normalizeFieldSelector, normalizeLabelSelector } from "./_normalize_selectors.ts";
import { Informer } from "./informer.ts";
import type { InformerOptions } from "./informer_options.ts";
import { log, type Logger, messageOf, resolveLogger } from "./logger.ts";
import { checkApiResource } from "../discovery/_check_api_resource.ts";
import {
  type CacheSyncResult,
  waitForCacheSync,
  waitForCacheSyncResult,
} from "./wait_for_cache_sync.ts";

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
  /**
   * Makes the ListerWatcher of a resource; it gets the selectors normalized.
   * Default: `resourceListerWatcher(client, resource)`.
   */
  listerWatcher?: (resource: InformerResource) => ListerWatcher;
  /** Options of every informer (each `informerFor` call may add its own). Default: `{}`. */
  defaults?: Omit<
    InformerOptions<KubeObject>,
    "name" | "transform" | "keyFunc" | "indexers" | "reuseListed"
  >;
  /**
   * The factory's logger, and every informer's unless `defaults.logger` or
   * its own options say otherwise (see {@linkcode Logger}). Handled errors
   * go to `onError` when one is given, else to the logger's `warn`.
   * Default: warnings and errors to the console, nothing else.
   */
  logger?: Logger;
}

interface Entry {
  informer: Informer<KubeObject>;
  /** The options it was made with, defaults included: what a later call must not contradict. */
  options: Record<string, unknown>;
}

/**
 * Hands out one {@linkcode Informer} per resource, namespace and selectors,
 * however many consumers ask (client-go's `SharedInformerFactory`), and
 * runs them all with one `AbortSignal`. Informers asked for after `start()`
 * start at once.
 *
 * Identity: selectors are normalized, so equivalent ones (`x=1,y=2` and
 * `y=2, x=1`; `k in (a,b)` and `k in (b,a)`; field selector terms in any
 * order) share one informer. Its default name (metrics label, log prefix)
 * is readable: `pods`, `configmaps.team-a`, `configmaps.team-a[app=web,tier in (a,b)]`,
 * `pods[fields:spec.nodeName=n1]`, with `(metadata)` for `metadataOnly`.
 * A later `informerFor` of the same informer may pass no options or the
 * same ones; an option that differs from the first call's (a different
 * `transform`, `indexers`, `resyncPeriodMs`, `expectedKind`...) throws a
 * `TypeError` naming it, as its informer could not honour it.
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
 *   metadata: { name: "web-1", namespace: "prod", labels: { app: "web", tier: "a" } },
 * });
 * const factory = new SharedInformerFactory({ client: new KubeClient({ server: server.url }) });
 * const pods = factory.informerFor({ apiVersion: "v1", resource: "pods" }, {
 *   expectedKind: "Pod",
 * });
 * const added: string[] = [];
 * pods.addEventHandler({ onAdd: (pod) => void added.push(pod.metadata.name!) });
 * // another part of the program asks for the same resource: the same informer, one watch
 * assert.equal(factory.informerFor({ apiVersion: "v1", resource: "pods" }), pods);
 * const web = factory.informerFor({
 *   apiVersion: "v1",
 *   resource: "pods",
 *   namespace: "prod",
 *   labelSelector: "tier in (b, a), app=web",
 * });
 * assert.equal(web.name, "pods.prod[app=web,tier in (a,b)]");
 * const ac = new AbortController();
 * const done = factory.start({ signal: ac.signal });
 * const sync = await factory.waitForCacheSyncResult(AbortSignal.timeout(10_000));
 * assert.ok(sync.synced, sync.message);
 * assert.equal(web.lister().list().length, 1);
 * ac.abort();
 * await done;
 * assert.deepEqual(added, ["web-1"]);
 * await server.close();
 * ```
 */
export class SharedInformerFactory {
  readonly #makeLw: (resource: InformerResource) => ListerWatcher;
  readonly #defaults: Omit<InformerOptions<KubeObject>, "name">;
  readonly #logger: Logger;
  readonly #entries = new Map<string, Entry>();
  readonly #runs: Promise<void>[] = [];
  /** One controller per running informer, aborted by the factory's one listener. */
  readonly #controllers = new Set<AbortController>();
  #signal: AbortSignal | undefined;
  /** What the first `start()` returned: every later call returns it too. */
  #started: Promise<void> | undefined;

  /**
   * Creates a factory holding no informer yet.
   *
   * @throws {TypeError} when neither `client` nor `listerWatcher` is given,
   *   or `logger` lacks a level.
   */
  constructor(options: SharedInformerFactoryOptions) {
    const { client, listerWatcher, defaults = {}, logger } = options ?? {};
    if (listerWatcher !== undefined && typeof listerWatcher !== "function") {
      throw new TypeError("SharedInformerFactory: listerWatcher must be a function");
    }
    if (!listerWatcher && !client) {
      throw new TypeError("SharedInformerFactory: client or listerWatcher is required");
    }
    this.#logger = resolveLogger(logger, "SharedInformerFactory");
    this.#makeLw = listerWatcher ?? ((r) => resourceListerWatcher(client!, r));
    this.#defaults = logger ? { logger, ...defaults } : defaults;
  }

  /** Every informer handed out so far. */
  get informers(): Informer<KubeObject>[] {
    return [...this.#entries.values()].map((e) => e.informer);
  }

  /**
   * The shared informer of `resource`, created on first request (see the
   * class docs for its name and for options of later requests).
   *
   * @throws {TypeError} when `apiVersion` or `resource` is missing, a
   *   selector is invalid, `options` contradict those of the informer's
   *   first request, or (given an `ApiResource` from discovery, such as
   *   `await api.resolve("deploy")`) a namespace is given for a
   *   cluster-scoped resource.
   * @throws {ResourceVerbError} given an `ApiResource` whose verbs lack
   *   `list` or `watch`.
   */
  informerFor<T extends KubeObjectLike = KubeObject>(
    resource: InformerResource,
    options: InformerOptions<T> = {},
  ): Informer<T> {
    if (!resource?.apiVersion || !resource.resource) {
      throw new TypeError(
        "SharedInformerFactory.informerFor: apiVersion and resource are required",
      );
    }
    // an ApiResource from discovery: scope and verbs checked
    checkApiResource("SharedInformerFactory.informerFor", resource, ["list", "watch"]);
    const normalized = normalizeResource(resource);
    const { apiVersion, resource: plural, namespace = "" } = normalized;
    const labels = normalized.labelSelector ?? "";
    const fields = normalized.fieldSelector ?? "";
    const metadataOnly = !!normalized.metadataOnly;
    const key = JSON.stringify([apiVersion, plural, namespace, labels, fields, metadataOnly]);
    const existing = this.#entries.get(key);
    if (existing) {
      checkSameOptions(existing, options as Record<string, unknown>);
      return existing.informer as unknown as Informer<T>;
    }
    const name = options.name ?? (namespace ? `${plural}.${namespace}` : plural) +
        (labels ? `[${labels}]` : "") + (fields ? `[fields:${fields}]` : "") +
        (metadataOnly ? "(metadata)" : "");
    const effective = { ...this.#defaults, ...options, name } as InformerOptions<T>;
    const lw = this.#makeLw(normalized) as unknown as ListerWatcher<T>;
    const informer = new Informer<T>(lw, effective);
    const entry: Entry = {
      informer: informer as unknown as Informer<KubeObject>,
      options: effective as Record<string, unknown>,
    };
    this.#entries.set(key, entry);
    log(this.#logger, "debug", `[${name}] informer created`, { name });
    if (this.#signal) this.#launch(entry, this.#signal);
    return informer;
  }

  /**
   * Runs every informer, present and future, until `signal` aborts; then
   * resolves once all have stopped. Adds one listener to `signal`, however
   * many informers. Informers asked for after `start()` start on their
   * own, at once, under the same signal.
   *
   * Calling it again is harmless (client-go's habit of starting again after
   * adding informers): nothing is started twice, running informers are left
   * alone, and it returns the first call's promise, which settles when the
   * first call's signal has aborted and every informer has stopped; a later
   * call's `signal` is not used. A factory whose signal has aborted stays
   * stopped.
   *
   * @example Starting again after adding an informer
   * ```ts
   * import assert from "node:assert/strict";
   * import { KubeClient, SharedInformerFactory } from "../../mod.ts";
   * import { FakeApiServer } from "../../testkit.ts";
   *
   * const server = await FakeApiServer.start();
   * const factory = new SharedInformerFactory({ client: new KubeClient({ server: server.url }) });
   * factory.informerFor({ apiVersion: "v1", resource: "configmaps" });
   * const ac = new AbortController();
   * const done = factory.start({ signal: ac.signal });
   * factory.informerFor({ apiVersion: "v1", resource: "secrets" }); // starts at once
   * assert.equal(factory.start({ signal: ac.signal }), done); // nothing new to start
   * assert.ok((await factory.waitForCacheSyncResult(AbortSignal.timeout(10_000))).synced);
   * ac.abort();
   * await done;
   * await server.close();
   * ```
   *
   * @throws {TypeError} (as a rejection) when `options.signal` is not an `AbortSignal`.
   */
  start(options: { signal: AbortSignal }): Promise<void> {
    const { signal } = options ?? {};
    if (!(signal instanceof AbortSignal)) {
      return Promise.reject(
        new TypeError("SharedInformerFactory.start: options.signal is required"),
      );
    }
    return this.#started ??= this.#start(signal);
  }

  async #start(signal: AbortSignal): Promise<void> {
    this.#signal = signal;
    const aborted = new Promise<void>((resolve) => {
      const stop = () => {
        for (const c of this.#controllers) c.abort(signal.reason);
        this.#controllers.clear();
        resolve();
      };
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
    });
    for (const entry of this.#entries.values()) this.#launch(entry, signal);
    await aborted;
    await Promise.all(this.#runs);
  }

  /**
   * {@linkcode waitForCacheSync} over every informer handed out so far:
   * `true` once all have synced, `false` if `signal` aborts first. To learn
   * which did not sync and why, use {@linkcode SharedInformerFactory.waitForCacheSyncResult}.
   */
  waitForCacheSync(signal: AbortSignal): Promise<boolean> {
    return waitForCacheSync(signal, ...this.informers);
  }

  /**
   * {@linkcode waitForCacheSyncResult} over every informer handed out so
   * far: whether all synced and, for each that did not, its name and last
   * error (`message` sums them up in one line).
   */
  waitForCacheSyncResult(signal: AbortSignal): Promise<CacheSyncResult> {
    return waitForCacheSyncResult(signal, ...this.informers);
  }

  #launch({ informer, options }: Entry, signal: AbortSignal): void {
    const controller = new AbortController();
    if (signal.aborted) controller.abort(signal.reason);
    else this.#controllers.add(controller);
    const onError = options.onError as InformerOptions<KubeObject>["onError"];
    const name = informer.name;
    this.#runs.push(
      informer.run({ signal: controller.signal }).catch((err) => {
        if (onError) {
          try {
            onError(err, "watch", { name });
          } catch { /* ignored */ }
        } else {log(this.#logger, "error", `[${name}] stopped: ${messageOf(err)}`, {
            name,
            error: err,
          });}
      }).finally(() => this.#controllers.delete(controller)),
    );
  }
}

/** The resource with its selectors normalized; empty fields left out. */
function normalizeResource(resource: InformerResource): InformerResource {
  const { apiVersion, resource: plural, namespace, labelSelector, fieldSelector, metadataOnly } =
    resource;
  let labels: string;
  try {
    labels = normalizeLabelSelector(labelSelector ?? "");
  } catch (err) {
    throw new TypeError(`SharedInformerFactory.informerFor: ${messageOf(err)}`);
  }
  if (fieldSelector !== undefined && typeof fieldSelector !== "string") {
    throw new TypeError("SharedInformerFactory.informerFor: fieldSelector must be a string");
  }
  const fields = normalizeFieldSelector(fieldSelector ?? "");
  return {
    apiVersion,
    resource: plural,
    ...(namespace ? { namespace } : {}),
    ...(labels ? { labelSelector: labels } : {}),
    ...(fields ? { fieldSelector: fields } : {}),
    ...(metadataOnly ? { metadataOnly: true } : {}),
  };
}

/**
 * Throws when an option of a later request differs from the informer's:
 * options absent or `undefined` are fine, equal values (functions by
 * identity, plain objects and arrays by content) too.
 */
function checkSameOptions(entry: Entry, options: Record<string, unknown>): void {
  for (const [option, value] of Object.entries(options ?? {})) {
    if (value === undefined || sameValue(entry.options[option], value)) continue;
    throw new TypeError(
      `SharedInformerFactory.informerFor: informer "${entry.informer.name}" already exists ` +
        `with another ${option}; pass the options of its first request, or none`,
    );
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  }
  if (!isPlain(a) || !isPlain(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length &&
    keys.every((k) => Object.hasOwn(b, k) && sameValue(a[k], b[k]));
}

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
