/**
 * The inside of one fake API server: storage, resources, continue
 * snapshots, fault rules, open watches, the request log, pending waits and
 * the listener, wired to the request handler.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import type { ServerContext } from "./_context.ts";
import { ContinueSnapshots } from "./_continue_snapshots.ts";
import { FaultRules } from "./_fault_rules.ts";
import { type HandlerDeps, handleRequest } from "./_handler.ts";
import { Listener } from "./_listener.ts";
import { ObjectStore } from "./_object_store.ts";
import { DEFAULT_RESOURCES, type Resource, ResourceRegistry } from "./_resources.ts";
import { Waiters } from "./_waiters.ts";
import type { WatchSession } from "./_watch_session.ts";
import type { ResolvedOptions } from "./fake_api_server_options.ts";
import type { ObjectRef, RecordedRequest } from "./types.ts";

/** The state of one server. */
export class ServerState {
  readonly registry: ResourceRegistry;
  readonly store: ObjectStore;
  readonly snapshots: ContinueSnapshots;
  readonly faults = new FaultRules();
  readonly waiters = new Waiters();
  readonly sessions = new Set<WatchSession>();
  /** Aborted by `close()`. */
  readonly closing = new AbortController();
  readonly listener: Listener;
  requests: RecordedRequest[] = [];
  requestCount = 0;
  watchesOpened = 0;
  tokens: Set<string> | undefined;

  constructor(options: ResolvedOptions) {
    const { historySize, startResourceVersion, keepAlive } = options;
    this.registry = new ResourceRegistry([...DEFAULT_RESOURCES, ...options.resources]);
    this.store = new ObjectStore({ historySize, startResourceVersion });
    this.snapshots = new ContinueSnapshots(options.continueTtlMs);
    this.store.subscribe(() => this.waiters.notify());
    const ctx: ServerContext = {
      behaviour: options.behaviour,
      registry: this.registry,
      store: this.store,
      snapshots: this.snapshots,
      watchStarted: (session) => {
        this.sessions.add(session);
        this.watchesOpened++;
        this.waiters.notify();
      },
      watchEnded: (session) => {
        this.sessions.delete(session);
        this.waiters.notify();
      },
    };
    const deps: HandlerDeps = {
      ctx,
      faults: this.faults,
      keepAlive: () => keepAlive && !this.faults.armsRequestTimeReset,
      tokens: () => this.tokens,
      record: (request) => {
        request.seq = ++this.requestCount;
        this.requests.push(request);
        this.waiters.notify();
      },
      closing: this.closing.signal,
    };
    this.listener = new Listener(
      options.hostname,
      (req, res) => handleRequest(deps, req, res),
      options.transport,
      () => this.waiters.notify(),
    );
  }

  /** The resource of an object's `apiVersion` and `kind`; `TypeError` when none. */
  resourceOf(object: Pick<KubeObjectLike, "apiVersion" | "kind">): Resource {
    const resource = this.registry.byKind(object?.apiVersion, object?.kind);
    if (!resource) {
      throw new TypeError(
        `FakeApiServer: no resource serves ${object?.apiVersion} ${object?.kind}`,
      );
    }
    return resource;
  }

  /** Where an object or reference points (namespace defaults to `"default"` for namespaced kinds). */
  locate(
    ref: ObjectRef | KubeObjectLike,
  ): { resource: Resource; namespace?: string; name: string } {
    const resource = this.resourceOf(ref);
    const source = "metadata" in ref && ref.metadata ? ref.metadata : (ref as ObjectRef);
    const namespace = resource.namespaced ? source.namespace || "default" : undefined;
    return { resource, namespace, name: source.name ?? "" };
  }
}
