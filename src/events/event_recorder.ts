/**
 * Kubernetes Events about objects, written from a controller as client-go's
 * event recorder writes them: aggregated, rate limited, never in the way of
 * a reconcile.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { KubeNetworkError } from "../api/errors.ts";
import { KubeStatusError } from "../api/kube_status_error.ts";
import { isAlreadyExists, isNotFound } from "../api/predicates.ts";
import { delay, unit } from "../async/_async.ts";
import { type ResourceClient, resourceClient } from "../transport/resource_client.ts";
import { EventCorrelator, type EventSeries } from "./_event_correlator.ts";
import {
  contentOf,
  coreV1Body,
  coreV1Patch,
  type EventContent,
  eventName,
  eventNamespaceOf,
  eventsV1Body,
  eventsV1Patch,
  type Reporter,
  seriesKeyOf,
  type SeriesState,
  spamKeyOf,
} from "./_event_body.ts";
import type { EventDetails } from "./event_details.ts";
import { type EventDropReason, EventRecordError } from "./event_record_error.ts";
import {
  type EventRecorderOptions,
  type ResolvedEventRecorderOptions,
  resolveEventRecorderOptions,
} from "./event_recorder_options.ts";

/** The API an {@linkcode EventRecorder} writes Events with. */
export type EventApi = "events.k8s.io/v1" | "v1";

/** What an {@linkcode EventRecorder} has done so far. */
export interface EventRecorderStats {
  /** Events created. */
  written: number;
  /** Events updated with a new count (aggregated repeats). */
  updated: number;
  /** Events not written, in all. */
  dropped: number;
  /**
   * By reason. `rateLimited`, `queueFull` and `closed` count calls;
   * `refused` and `unreachable` count writes, and one write may carry
   * several repeats of an event that waited together.
   */
  droppedBy: Record<EventDropReason, number>;
}

type Kube = Record<string, unknown> & KubeObjectLike;

/**
 * Writes Kubernetes Events about objects: `events.k8s.io/v1` Events
 * (`regarding` the object, `reportingController` the component), or core
 * v1 Events where the API server does not serve events.k8s.io/v1 (a 404
 * on the collection: the recorder then stays with core v1). The Event goes
 * to the object's namespace, `"default"` for cluster-scoped objects.
 *
 * As client-go's correlator: an event identical to one recorded less than
 * `windowMs` before (same object, type, reason, action, note and related
 * object) updates that Event's series (core v1: `count` and
 * `lastTimestamp`) instead of creating another; each object has a token
 * bucket (a burst of 25, then one every 5 minutes) and events beyond it
 * are dropped; both caches keep at most `cacheSize` keys.
 *
 * {@linkcode EventRecorder.event} returns at once and never throws for
 * anything the API does: writes happen one at a time in the background,
 * at most `maxPending` wait (beyond that an event is dropped), a refused
 * write is dropped (a 5xx, a 429 or a network error is retried once),
 * and every drop is counted in {@linkcode EventRecorder.stats} and, for
 * refusals, reported to `onError`. A patch that finds its Event gone
 * (expired, deleted) creates it again.
 *
 * The RBAC it needs: `create` and `patch` on `events` in API group
 * `events.k8s.io` (and in the core group `""` for the fallback).
 *
 * @example Three identical events make one Event with a series of 3
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventRecorder, KubeClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * const recorder = new EventRecorder({
 *   client: new KubeClient({ server: server.url }),
 *   component: "example.com/my-controller",
 * });
 * const pod = {
 *   apiVersion: "v1",
 *   kind: "Pod",
 *   metadata: { name: "web", namespace: "prod", uid: "u-1" },
 * };
 * for (let i = 0; i < 3; i++) {
 *   recorder.event(pod, { type: "Warning", reason: "BackOff", message: "restarting" });
 * }
 * await recorder.close(); // waits for what is pending
 * const [event] = server.objects({ resource: "events", group: "events.k8s.io" });
 * assert.equal(event.note, "restarting");
 * assert.deepEqual((event.regarding as { name: string }).name, "web");
 * assert.equal((event.series as { count: number }).count, 3);
 * assert.equal(recorder.stats.dropped, 0);
 * await server.close();
 * ```
 */
export class EventRecorder {
  readonly #o: ResolvedEventRecorderOptions;
  readonly #reporter: Reporter;
  readonly #correlator: EventCorrelator;
  readonly #clients: Record<EventApi, ResourceClient<Kube>>;
  readonly #queue: EventSeries[] = [];
  readonly #stop = new AbortController();
  #api: EventApi = "events.k8s.io/v1";
  #draining: Promise<void> | undefined;
  #inFlight = false;
  #closed = false;
  #lastNanos = BigInt(0);
  readonly #stats: EventRecorderStats = {
    written: 0,
    updated: 0,
    dropped: 0,
    droppedBy: { rateLimited: 0, queueFull: 0, refused: 0, unreachable: 0, closed: 0 },
  };

  /** Validates `options` (a `TypeError`/`RangeError` at once); sends nothing until an event. */
  constructor(options: EventRecorderOptions) {
    const o = this.#o = resolveEventRecorderOptions(options);
    this.#reporter = { component: o.component, instance: o.instance };
    this.#correlator = new EventCorrelator(o);
    this.#clients = {
      "events.k8s.io/v1": resourceClient<Kube>(o.client, {
        apiVersion: "events.k8s.io/v1",
        resource: "events",
      }),
      "v1": resourceClient<Kube>(o.client, { apiVersion: "v1", resource: "events" }),
    };
  }

  /** The reporting component (`reportingController`). */
  get component(): string {
    return this.#o.component;
  }

  /** The reporting instance (`reportingInstance`). */
  get instance(): string {
    return this.#o.instance;
  }

  /** The API Events are written with: `"events.k8s.io/v1"` until the server is found not to serve it. */
  get api(): EventApi {
    return this.#api;
  }

  /** Writes waiting or in flight. */
  get pending(): number {
    return this.#queue.length + (this.#inFlight ? 1 : 0);
  }

  /** A copy of the counts so far. */
  get stats(): EventRecorderStats {
    return { ...this.#stats, droppedBy: { ...this.#stats.droppedBy } };
  }

  /**
   * Records an event about `object` (which needs `apiVersion`, `kind` and
   * `metadata.name`; its `namespace`, `uid` and `resourceVersion` are
   * referenced too). Returns at once: the write happens in the
   * background, or the event is dropped and counted (rate limit, full
   * queue, closed recorder, refusal).
   *
   * @throws {TypeError} a malformed call: an object without apiVersion, kind or name, a type other than `"Normal"`/`"Warning"`, no reason, both `message` and `note`.
   * @throws {RangeError} a reason or action longer than 128 characters.
   */
  event(object: KubeObjectLike, details: EventDetails): void {
    const content = contentOf(object, details);
    if (this.#closed) return this.#drop("closed");
    const now = this.#o.clock.now();
    const decision = this.#correlator.decide({
      spamKey: spamKeyOf(content, this.#reporter),
      key: seriesKeyOf(content, this.#reporter),
      namespace: eventNamespaceOf(content),
      content,
      newName: () => this.#newName(content.regarding.name),
      queueHasRoom: this.#queue.length < this.#o.maxPending,
    }, now);
    if (decision.kind === "drop") return this.#drop(decision.reason);
    if (decision.kind === "update" && !decision.enqueue) return; // the waiting write carries it
    decision.series.pending = true;
    this.#queue.push(decision.series);
    this.#draining ??= this.#drain();
  }

  /** Resolves once every write waiting or in flight is done (written or dropped). Never rejects. */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /**
   * Stops taking events (later ones are dropped as `closed`) and resolves
   * once what is pending is written or dropped. When `options.signal`
   * aborts first, the write in flight is cut and what waits is dropped as
   * `closed`. Never rejects; calling it again is harmless.
   */
  async close(options: { signal?: AbortSignal } = {}): Promise<void> {
    this.#closed = true;
    const signal = options?.signal;
    const stop = () => this.#stop.abort();
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop, { once: true });
    try {
      await this.flush();
    } finally {
      signal?.removeEventListener("abort", stop);
    }
  }

  /** Writes the queue, one at a time. Never rejects. */
  async #drain(): Promise<void> {
    try {
      await null; // let the caller's other events of this turn join their series first
      while (this.#queue.length > 0) {
        const series = this.#queue.shift()!;
        series.pending = false;
        if (this.#stop.signal.aborted) {
          this.#drop("closed");
          continue;
        }
        this.#inFlight = true;
        try {
          await this.#write(series);
        } catch (err) {
          this.#fail(series, err);
        } finally {
          this.#inFlight = false;
        }
      }
    } finally {
      this.#draining = undefined;
    }
  }

  /** Creates or patches the series' Event; rejects with what failed (the caller drops it). */
  async #write(series: EventSeries): Promise<void> {
    if (series.created) {
      const patch = this.#api === "v1"
        ? coreV1Patch(stateOf(series))
        : eventsV1Patch(stateOf(series));
      try {
        await this.#request((signal) =>
          this.#clients[this.#api].patch(series.name, patch, {
            type: "merge",
            namespace: series.namespace,
            signal,
          })
        );
        this.#stats.updated++;
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // expired or deleted meanwhile: a new Event carries the series on
        series.created = false;
        series.name = this.#newName((series.content as EventContent).regarding.name);
      }
    }
    await this.#create(series);
  }

  async #create(series: EventSeries): Promise<void> {
    const content = series.content as EventContent;
    const send = (api: EventApi) => {
      const s = stateOf(series);
      const body = api === "v1"
        ? coreV1Body(content, s, this.#reporter)
        : eventsV1Body(content, s, this.#reporter);
      let retried = false;
      return this.#request(
        (signal) => this.#clients[api].create(body as Kube, { signal }),
        () => retried = true,
      ).catch((err) => {
        if (retried && isAlreadyExists(err)) return; // the first attempt was written after all
        throw err;
      });
    };
    try {
      await send(this.#api);
    } catch (err) {
      if (this.#api !== "events.k8s.io/v1" || !groupNotServed(err)) throw err;
      this.#api = "v1"; // remembered: later events go to core v1 at once
      await send("v1");
    }
    series.created = true;
    this.#stats.written++;
  }

  /** One request with a timeout, retried once after `retryDelayMs` when it failed with a 5xx, a 429 or no answer. */
  async #request<T>(fn: (signal: AbortSignal) => Promise<T>, onRetry?: () => void): Promise<T> {
    const { clock, requestTimeoutMs, retryDelayMs } = this.#o;
    for (let attempt = 0;; attempt++) {
      const ac = new AbortController();
      const stop = () => ac.abort(this.#stop.signal.reason);
      this.#stop.signal.addEventListener("abort", stop, { once: true });
      const timer = clock.setTimeout(
        () =>
          ac.abort(
            new DOMException(`no answer within ${requestTimeoutMs} ms`, "TimeoutError"),
          ),
        requestTimeoutMs,
      );
      try {
        return await fn(ac.signal);
      } catch (err) {
        if (attempt > 0 || this.#stop.signal.aborted || !retriable(err)) throw err;
      } finally {
        clock.clearTimeout(timer);
        this.#stop.signal.removeEventListener("abort", stop);
      }
      onRetry?.();
      await delay(retryDelayMs, this.#stop.signal, clock);
    }
  }

  /** Drops a write that failed: counted, and reported unless the recorder was stopped. */
  #fail(series: EventSeries, err: unknown): void {
    if (this.#stop.signal.aborted) return this.#drop("closed");
    const reason: EventDropReason = err instanceof KubeStatusError ? "refused" : "unreachable";
    this.#drop(reason);
    const onError = this.#o.onError;
    if (!onError) return;
    const content = series.content as EventContent;
    const { kind, namespace = "", name } = content.regarding;
    try {
      onError(
        new EventRecordError(reason, { kind, namespace, name }, content.type, content.reason, err),
      );
    } catch { /* a handler's own failure is ignored */ }
  }

  #drop(reason: EventDropReason): void {
    this.#stats.dropped++;
    this.#stats.droppedBy[reason]++;
  }

  /** `${objectName}.${16 hex digits}`: unix nanoseconds (the sub-millisecond part random), never repeated by this recorder. */
  #newName(objectName: string): string {
    const ms = BigInt(Math.max(0, Math.floor(this.#o.clock.now())));
    const sub = BigInt(Math.min(999_999, Math.floor(unit(this.#o.random()) * 1_000_000)));
    let nanos = ms * BigInt(1_000_000) + sub;
    if (nanos <= this.#lastNanos) nanos = this.#lastNanos + BigInt(1);
    this.#lastNanos = nanos;
    return eventName(objectName, nanos.toString(16).padStart(16, "0").slice(-16));
  }
}

function stateOf(series: EventSeries): SeriesState {
  const { name, namespace, count, firstTime, lastTime } = series;
  return { name, namespace, count, firstTime, lastTime };
}

/** A 5xx, a 429, or no answer (network error, timeout). */
function retriable(err: unknown): boolean {
  if (err instanceof KubeStatusError) return err.code >= 500 || err.code === 429;
  return err instanceof KubeNetworkError || (err as { name?: unknown })?.name === "TimeoutError";
}

/** A 404 on the collection itself (not the namespace's): the server does not serve the group. */
function groupNotServed(err: unknown): boolean {
  return isNotFound(err) && (err as KubeStatusError).status?.details?.kind !== "namespaces";
}
