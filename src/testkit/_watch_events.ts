/**
 * Watch event lines as kube-apiserver writes them: one compact JSON object
 * and `\n` per event; selectors applied the watch cache's way (an object
 * that starts matching arrives as ADDED, one that stops matching as DELETED
 * carrying its previous content at the event's resourceVersion).
 *
 * @module
 */
import type { KubeObject, Status, WatchEventType } from "../api/types.ts";
import { INITIAL_EVENTS_END_ANNOTATION } from "../api/types.ts";
import { compactJson } from "./_json.ts";
import type { StoredEvent } from "./_object_store.ts";
import type { View } from "./_view.ts";

/** One event line. */
export function eventLine(type: WatchEventType, object: KubeObject | Status): string {
  return compactJson({ type, object });
}

/** The line a stored change becomes for a watcher with this view, or undefined when it does not see it. */
export function changeLine(event: StoredEvent, view: View): string | undefined {
  const nowMatches = event.type !== "DELETED" && view.matches(event.object);
  const wasMatching = event.prev !== undefined && view.matches(event.prev);
  if (nowMatches && wasMatching) return eventLine("MODIFIED", view.show(event.object));
  if (nowMatches) return eventLine("ADDED", view.show(event.object));
  if (!wasMatching) return undefined;
  if (event.type === "DELETED") return eventLine("DELETED", view.show(event.object));
  const rv = event.object.metadata.resourceVersion;
  const gone = { ...event.prev!, metadata: { ...event.prev!.metadata, resourceVersion: rv } };
  return eventLine("DELETED", view.show(gone));
}

/** A BOOKMARK line: only `kind`, `apiVersion` and `metadata.resourceVersion` (plus the end-of-initial-events annotation). */
export function bookmarkLine(view: View, rv: number, initialEventsEnd = false): string {
  const metadata: Record<string, unknown> = {
    resourceVersion: String(rv),
    creationTimestamp: null,
  };
  if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END_ANNOTATION]: "true" };
  return eventLine("BOOKMARK", { kind: view.kind, apiVersion: view.apiVersion, metadata });
}
