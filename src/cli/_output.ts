/**
 * The output formats that do not need a table: `json`, `ndjson` and
 * `name`, and the checks of `-o`.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import { UsageError } from "./_usage_error.ts";

/** The values of `-o`/`--output`. */
export const OUTPUT_FORMATS = ["table", "wide", "json", "ndjson", "name"] as const;
/** One value of `-o`/`--output`. */
export type OutputFormat = typeof OUTPUT_FORMATS[number];

/** `-o`'s value checked (default `table`). */
export function outputFormat(value: string | undefined, command: string): OutputFormat {
  if (value === undefined) return "table";
  if (!(OUTPUT_FORMATS as readonly string[]).includes(value)) {
    throw new UsageError(
      `unknown output format "${value}": use one of ${OUTPUT_FORMATS.join(", ")}`,
      command,
    );
  }
  return value as OutputFormat;
}

/** What `-o name` needs of a resource. */
export interface NamedResource {
  kind: string;
  group: string;
}

/** kubectl's `-o name`: `deployment.apps/web`, `configmap/a`. */
export function nameLine(resource: NamedResource, object: KubeObjectLike): string {
  const kind = resource.kind.toLowerCase();
  return `${resource.group === "" ? kind : `${kind}.${resource.group}`}/${
    object.metadata?.name ?? ""
  }\n`;
}

/** `-o json`: indented as kubectl does (4 spaces). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 4) + "\n";
}

/** One ndjson line. */
export function ndjsonLine(value: unknown): string {
  return JSON.stringify(value) + "\n";
}

/** The watch event types printed: the informer's changes as the API's event types. */
export type EventType = "ADDED" | "MODIFIED" | "DELETED";

/** An ndjson event line: `{"type":"ADDED","object":{...}}`. */
export function eventLine(type: EventType, object: unknown): string {
  return ndjsonLine({ type, object });
}
