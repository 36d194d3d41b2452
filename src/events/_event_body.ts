/**
 * Validation of a call of `EventRecorder.event`, and the bodies and names of
 * the Events it writes (events.k8s.io/v1 and core v1).
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { microTime } from "../leader/_lease_record.ts";
import type { EventDetails, EventType, ObjectReference } from "./event_details.ts";

/** What an Event says, validated. */
export interface EventContent {
  type: EventType;
  reason: string;
  action: string;
  note: string;
  regarding: ObjectReference;
  related?: ObjectReference;
}

/** Who reports. */
export interface Reporter {
  component: string;
  instance: string;
}

/** What a write sends: the state of a series when it is written. */
export interface SeriesState {
  name: string;
  namespace: string;
  count: number;
  firstTime: number;
  lastTime: number;
}

/** The most UTF-8 bytes of a note. */
export const MAX_NOTE_BYTES = 1024;

const MAX_FIELD = 128;

function text(where: string, value: unknown): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`EventRecorder.event: ${where} must be a non-empty string`);
  }
  return value;
}

function optionalText(where: string, value: unknown): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") {
    throw new TypeError(`EventRecorder.event: ${where} must be a string`);
  }
  return value;
}

function short(where: string, value: string): string {
  if (value.length > MAX_FIELD) {
    throw new RangeError(
      `EventRecorder.event: ${where} must be at most ${MAX_FIELD} characters, got ${value.length}`,
    );
  }
  return value;
}

/** A reference from a caller's object or reference; `TypeError` when it names no object. */
function referenceOf(where: string, value: unknown, fromObject: boolean): ObjectReference {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`EventRecorder.event: ${where} must be an object`);
  }
  const v = value as KubeObjectLike & ObjectReference;
  const meta = fromObject ? v.metadata : v;
  if (meta === null || typeof meta !== "object") {
    throw new TypeError(`EventRecorder.event: ${where}.metadata is required`);
  }
  const prefix = fromObject ? `${where}.metadata` : where;
  const ref: ObjectReference = {
    apiVersion: text(`${where}.apiVersion (list items carry none: set it)`, v.apiVersion),
    kind: text(`${where}.kind (list items carry none: set it)`, v.kind),
    name: text(`${prefix}.name`, meta.name),
  };
  const namespace = optionalText(`${prefix}.namespace`, meta.namespace);
  const uid = optionalText(`${prefix}.uid`, meta.uid);
  const resourceVersion = optionalText(`${prefix}.resourceVersion`, meta.resourceVersion);
  const fieldPath = fromObject ? undefined : optionalText(`${where}.fieldPath`, v.fieldPath);
  if (namespace) ref.namespace = namespace;
  if (uid) ref.uid = uid;
  if (resourceVersion) ref.resourceVersion = resourceVersion;
  if (fieldPath) ref.fieldPath = fieldPath;
  return ref;
}

/** Cuts `note` to `MAX_NOTE_BYTES` UTF-8 bytes, at a character boundary, ending with `" ..."`. */
export function truncateNote(note: string): string {
  const bytes = new TextEncoder().encode(note);
  if (bytes.length <= MAX_NOTE_BYTES) return note;
  const suffix = " ...";
  let end = MAX_NOTE_BYTES - suffix.length;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--; // not inside a character
  return new TextDecoder().decode(bytes.subarray(0, end)) + suffix;
}

/**
 * Validates one call.
 *
 * @throws {TypeError} an object without apiVersion, kind or name; a type other than Normal/Warning; no reason; a malformed field.
 * @throws {RangeError} a reason or action longer than 128 characters.
 */
export function contentOf(object: unknown, details: EventDetails): EventContent {
  const regarding = referenceOf("object", object, true);
  if (details === null || typeof details !== "object") {
    throw new TypeError("EventRecorder.event: details must be an object");
  }
  const { type } = details;
  if (type !== "Normal" && type !== "Warning") {
    throw new TypeError(
      `EventRecorder.event: type must be "Normal" or "Warning", got ${JSON.stringify(type)}`,
    );
  }
  const reason = short("reason", text("reason", details.reason));
  const action = short("action", optionalText("action", details.action) ?? reason);
  const message = optionalText("message", details.message);
  const note = optionalText("note", details.note);
  if (message !== undefined && note !== undefined && message !== note) {
    throw new TypeError("EventRecorder.event: give message or note, not both");
  }
  const content: EventContent = {
    type,
    reason,
    action,
    note: truncateNote(message ?? note ?? ""),
    regarding,
  };
  if (details.related !== undefined) {
    content.related = referenceOf("related", details.related, false);
  }
  return content;
}

/** The rate-limit key: the reporter and the object (its uid, not its resourceVersion). */
export function spamKeyOf(content: EventContent, reporter: Reporter): string {
  const r = content.regarding;
  return JSON.stringify([reporter.component, r.apiVersion, r.kind, r.namespace, r.name, r.uid]);
}

/** The aggregation key: the object, type, reason, action, note and related object. */
export function seriesKeyOf(content: EventContent, reporter: Reporter): string {
  const rel = content.related;
  return JSON.stringify([
    spamKeyOf(content, reporter),
    content.type,
    content.reason,
    content.action,
    content.note,
    rel && [rel.apiVersion, rel.kind, rel.namespace, rel.name, rel.uid, rel.fieldPath],
  ]);
}

/** The namespace of an object's Events: its own, `"default"` for cluster-scoped objects. */
export function eventNamespaceOf(content: EventContent): string {
  return content.regarding.namespace || "default";
}

/**
 * A valid Event name from an object's name and 16 hex digits: the name's
 * labels made DNS-safe (lower case, other characters as `-`), cut to fit
 * 253 characters.
 */
export function eventName(objectName: string, hex16: string): string {
  const labels = objectName.toLowerCase().split(".")
    .map((l) => l.replace(/[^a-z0-9-]/g, "-").replace(/^-+|-+$/g, ""))
    .filter((l) => l !== "");
  let base = labels.join(".").slice(0, 253 - 17).replace(/[-.]+$/, "");
  if (base === "") base = "event";
  return `${base}.${hex16}`;
}

/** An RFC 3339 time with seconds, as core v1's `Time` fields take it. */
function seconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** The events.k8s.io/v1 Event to create. */
export function eventsV1Body(
  content: EventContent,
  s: SeriesState,
  reporter: Reporter,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name: s.name, namespace: s.namespace },
    eventTime: microTime(s.firstTime),
    reportingController: reporter.component,
    reportingInstance: reporter.instance,
    action: content.action,
    reason: content.reason,
    regarding: content.regarding,
    note: content.note,
    type: content.type,
  };
  if (content.related) body.related = content.related;
  if (s.count >= 2) body.series = eventsV1Patch(s).series;
  return body;
}

/** The merge patch of an events.k8s.io/v1 Event's series. */
export function eventsV1Patch(s: SeriesState): { series: Record<string, unknown> } {
  return { series: { count: s.count, lastObservedTime: microTime(s.lastTime) } };
}

/** The core v1 Event to create. */
export function coreV1Body(
  content: EventContent,
  s: SeriesState,
  reporter: Reporter,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: s.name, namespace: s.namespace },
    involvedObject: content.regarding,
    reason: content.reason,
    message: content.note,
    type: content.type,
    action: content.action,
    source: { component: reporter.component, host: reporter.instance },
    reportingComponent: reporter.component,
    reportingInstance: reporter.instance,
    firstTimestamp: seconds(s.firstTime),
    lastTimestamp: seconds(s.lastTime),
    count: s.count,
  };
  if (content.related) body.related = content.related;
  return body;
}

/** The merge patch of a core v1 Event's count. */
export function coreV1Patch(s: SeriesState): Record<string, unknown> {
  return { count: s.count, lastTimestamp: seconds(s.lastTime) };
}
