/**
 * Tables as kubectl prints them: upper-case headers, columns padded to
 * their widest cell plus 3 spaces (at least 6 wide; the last one is not
 * padded), the server's `Table` columns of priority 0 (all with `wide`),
 * a NAMESPACE column first across namespaces, and, without a server
 * `Table`, NAME and AGE computed from the object.
 *
 * @module
 */
import type { KubeObjectLike, ListMeta } from "../api/types.ts";
import { ageOf } from "./_age.ts";

/** A column of a server `Table` (meta.k8s.io/v1). */
export interface TableColumnDefinition {
  name: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
}

/** A row of a server `Table`: its cells, and the object (metadata only by default). */
export interface TableRow {
  cells: unknown[];
  object?: KubeObjectLike;
}

/** A server `Table` (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`). */
export interface ServerTable {
  kind: "Table";
  apiVersion?: string;
  metadata?: ListMeta;
  columnDefinitions?: TableColumnDefinition[];
  rows?: TableRow[] | null;
}

/** The `Accept` header that asks for a `Table`, with JSON as the fallback. */
export const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/** True when a response body is a server `Table`. */
export function isServerTable(body: unknown): body is ServerTable {
  return typeof body === "object" && body !== null &&
    (body as { kind?: unknown }).kind === "Table" &&
    Array.isArray((body as { columnDefinitions?: unknown }).columnDefinitions);
}

/** A cell as kubectl prints it: `<none>` for null. */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "<none>";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** How rows are made: the headers, and the cells of one row. */
export interface Columns {
  headers: string[];
  /** The cells of an object's row; `row` is the server's row, when there is one. */
  cells(object: KubeObjectLike, row?: TableRow): string[];
}

/** What decides the columns. */
export interface ColumnOptions {
  /** `wide`: every column, not only those of priority 0. */
  wide: boolean;
  /** A NAMESPACE column first (across namespaces, on a namespaced resource). */
  namespaceColumn: boolean;
  /** An EVENT column first (watch). */
  eventColumn?: boolean;
  /** The time, for AGE without a server `Table`. */
  now: () => number;
}

/** Columns from a server `Table`'s column definitions. */
export function serverColumns(
  definitions: readonly TableColumnDefinition[],
  options: ColumnOptions,
): Columns {
  const shown = definitions.flatMap((d, i) => options.wide || !(d.priority! > 0) ? [i] : []);
  return {
    headers: [
      ...(options.namespaceColumn ? ["NAMESPACE"] : []),
      ...shown.map((i) => definitions[i].name.toUpperCase()),
    ],
    cells: (object, row) => [
      ...(options.namespaceColumn ? [object.metadata?.namespace ?? ""] : []),
      ...shown.map((i) => formatCell(row?.cells[i])),
    ],
  };
}

/** Columns without a server `Table`: NAME and AGE (kubectl's own for an unknown type). */
export function fallbackColumns(options: ColumnOptions): Columns {
  return {
    headers: [...(options.namespaceColumn ? ["NAMESPACE"] : []), "NAME", "AGE"],
    cells: (object) => [
      ...(options.namespaceColumn ? [object.metadata?.namespace ?? ""] : []),
      object.metadata?.name ?? "",
      ageOf(
        (object.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp,
        options.now(),
      ),
    ],
  };
}

const MIN_WIDTH = 6;
const PADDING = 3;

/**
 * Aligned text, kubectl's tabwriter: each column but the last padded to its
 * widest cell + 3 (at least 6). Widths only grow: a watch prints its rows
 * as they come, aligned with what was printed before where they fit.
 */
export class AlignedText {
  #widths: number[];

  /** `minWidths`: the least width of the first columns (watch: EVENT fits MODIFIED). */
  constructor(minWidths: readonly number[] = []) {
    this.#widths = [...minWidths];
  }

  /** The lines of `rows` (each a line's cells), aligned; `\n` after each. */
  render(rows: readonly (readonly string[])[]): string {
    for (const row of rows) {
      row.forEach((cell, i) => {
        this.#widths[i] = Math.max(this.#widths[i] ?? 0, cell.length + PADDING, MIN_WIDTH);
      });
    }
    return rows.map((row) =>
      row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(this.#widths[i])).join("") +
      "\n"
    ).join("");
  }
}
