/**
 * The error an {@linkcode EventRecorder} reports when it drops an event the
 * API refused or could not take.
 *
 * @module
 */
import { KubeStatusError } from "../api/kube_status_error.ts";

/** Why an event was not written (the keys of `EventRecorder.stats.droppedBy`). */
export type EventDropReason =
  /** The object's rate limit (burst, then one per refill period) was used up. */
  | "rateLimited"
  /** `maxPending` events were already waiting. */
  | "queueFull"
  /** The API answered with an error (4xx, or a 5xx twice). */
  | "refused"
  /** The API could not be reached (twice), or did not answer within the request timeout. */
  | "unreachable"
  /** The recorder was closed. */
  | "closed";

/** The object an event was about, as an error names it: no other data of it. */
export interface EventObjectRef {
  /** The object's kind. */
  kind: string;
  /** Its namespace (`""`: cluster-scoped). */
  namespace: string;
  /** Its name. */
  name: string;
}

/**
 * An event that was dropped because the API refused it (`dropReason`
 * `"refused"`, a `KubeStatusError` as `cause`) or could not be reached
 * (`"unreachable"`, a `KubeNetworkError` or a timeout as `cause`). The
 * message names the event's type and reason and the object's kind,
 * namespace and name, and of a refusal only its code and Status reason
 * (the server's message may quote the Event: it stays in `cause`).
 *
 * @example Reported to `onError` when the credentials may not create Events
 * ```ts
 * import assert from "node:assert/strict";
 * import { EventRecordError, EventRecorder, KubeClient } from "../../mod.ts";
 * import { FakeApiServer } from "../../testkit.ts";
 *
 * const server = await FakeApiServer.start();
 * server.inject({ verb: "create", resource: "events", fault: { kind: "status", code: 403 } });
 * const errors: EventRecordError[] = [];
 * const recorder = new EventRecorder({
 *   client: new KubeClient({ server: server.url }),
 *   component: "my-controller",
 *   onError: (err) => errors.push(err),
 * });
 * const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "prod" } };
 * recorder.event(pod, { type: "Warning", reason: "Failed", message: "no image" });
 * await recorder.close();
 * assert.ok(errors[0] instanceof EventRecordError);
 * assert.equal(errors[0].dropReason, "refused");
 * assert.deepEqual(errors[0].regarding, { kind: "Pod", namespace: "prod", name: "web" });
 * await server.close();
 * ```
 */
export class EventRecordError extends Error {
  /** Why it was dropped: `"refused"` or `"unreachable"`. */
  readonly dropReason: EventDropReason;
  /** The object the event was about. */
  readonly regarding: EventObjectRef;
  /** The event's reason (`"Failed"`). */
  readonly eventReason: string;

  /**
   * Creates the error.
   *
   * @param dropReason Why the event was dropped.
   * @param regarding The object it was about.
   * @param type The event's type.
   * @param eventReason The event's reason.
   * @param cause What the request failed with.
   */
  constructor(
    dropReason: EventDropReason,
    regarding: EventObjectRef,
    type: string,
    eventReason: string,
    cause: unknown,
  ) {
    const { kind, namespace, name } = regarding;
    // the server's Status message may quote what was sent: only its code and reason
    const what = cause instanceof KubeStatusError
      ? `HTTP ${cause.code}${cause.reason ? ` ${cause.reason}` : ""}`
      : cause instanceof Error
      ? cause.message
      : String(cause);
    super(
      `EventRecorder: ${type} event ${eventReason} about ${kind} ${
        namespace ? `${namespace}/` : ""
      }${name} dropped (${dropReason}): ${what}`,
      { cause },
    );
    this.name = "EventRecordError";
    this.dropReason = dropReason;
    this.regarding = { kind, namespace, name };
    this.eventReason = eventReason;
  }
}
