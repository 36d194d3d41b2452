/**
 * What one call of `EventRecorder.event` says.
 *
 * @module
 */

/** An Event's type: the API knows these two. */
export type EventType = "Normal" | "Warning";

/** A reference to an object, as an Event's `regarding` and `related` carry it. */
export interface ObjectReference {
  /** `"v1"` or `"GROUP/VERSION"`. */
  apiVersion: string;
  /** The object's kind (`"Pod"`). */
  kind: string;
  /** Its name. */
  name: string;
  /** Its namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** Its uid. */
  uid?: string;
  /** Its resourceVersion when the event happened. */
  resourceVersion?: string;
  /** A part of the object (`"spec.containers{web}"`). */
  fieldPath?: string;
}

/** What an event says about an object (see {@linkcode EventRecorder.event}). */
export interface EventDetails {
  /** `"Normal"` or `"Warning"`. Required. */
  type: EventType;
  /** Why it happened, short and in UpperCamelCase (`"FailedCreate"`), at most 128 characters. Required. */
  reason: string;
  /**
   * What happened, for humans (the Event's `note`; core v1: `message`),
   * cut to 1 kB (1024 UTF-8 bytes, ending with `" ..."`) as the API
   * requires. Default: `""`.
   */
  message?: string;
  /** The same as `message`, by its events.k8s.io/v1 name; give one or the other. */
  note?: string;
  /** What the component did or failed to do (`"Scale"`), at most 128 characters. Default: `reason`. */
  action?: string;
  /** A second object the event involves (the Pod a ReplicaSet created). Default: none. */
  related?: ObjectReference;
}
