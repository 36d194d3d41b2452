/**
 * `watch -o table|wide`: the rows of the changes, in the server's columns.
 * The informer holds whole objects, and a server `Table` holds only rows,
 * so the rows come from the server beside it: one Table list at the start
 * (the columns, and a row per object, kept by key with its
 * resourceVersion), then, for a change whose version has no row yet, one
 * `GET` of that object as a Table. A deleted object prints its last known
 * row. A server that does not answer with Tables (the test kit) gets
 * kubectl's columns for unknown types: NAME and AGE computed from the
 * objects, with no request.
 *
 * @module
 */
import type { KubeObjectLike } from "../api/types.ts";
import type { KubeClient } from "../transport/kube_client.ts";
import { resourcePath } from "../transport/resource_path.ts";
import type { ApiResource } from "../discovery/api_resource.ts";
import { listPages } from "./_list_pages.ts";
import {
  AlignedText,
  type Columns,
  fallbackColumns,
  formatCell,
  isServerTable,
  serverColumns,
  TABLE_ACCEPT,
  type TableColumnDefinition,
  type TableRow,
} from "./_table.ts";
import type { EventType } from "./_output.ts";

/** What {@linkcode WatchRows.open} needs. */
export interface WatchRowsOptions {
  client: KubeClient;
  resource: ApiResource;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  wide: boolean;
  namespaceColumn: boolean;
  now: () => number;
  signal: AbortSignal;
}

const keyOf = (o: KubeObjectLike) =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata?.name}` : `${o.metadata?.name}`;

/** The lines a watch prints in a table: the header once, then a row per change. */
export class WatchRows {
  readonly #o: WatchRowsOptions;
  readonly #columns: Columns;
  readonly #definitions?: TableColumnDefinition[];
  readonly #rows = new Map<string, { resourceVersion?: string; row: TableRow }>();
  readonly #text = new AlignedText(["MODIFIED".length + 3]); // every event type fits
  #headerDone = false;

  private constructor(o: WatchRowsOptions, definitions?: TableColumnDefinition[]) {
    this.#o = o;
    this.#definitions = definitions;
    const options = { wide: o.wide, namespaceColumn: o.namespaceColumn, now: o.now };
    this.#columns = definitions ? serverColumns(definitions, options) : fallbackColumns(options);
  }

  /** Lists the rows as a Table (when the server serves them). */
  static async open(o: WatchRowsOptions): Promise<WatchRows> {
    const listed = await listPages({
      client: o.client,
      path: resourcePath({ ...o.resource, namespace: o.namespace }),
      accept: TABLE_ACCEPT,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      pageSize: 500,
      signal: o.signal,
    });
    const rows = new WatchRows(o, listed.columns);
    if (listed.columns) {
      for (const { object, row } of listed.items) {
        rows.#rows.set(keyOf(object), {
          resourceVersion: object.metadata?.resourceVersion,
          row: row!,
        });
      }
    }
    return rows;
  }

  /** The text of one change: its row, after the header the first time. */
  async line(type: EventType, object: KubeObjectLike): Promise<string> {
    const row = this.#definitions ? await this.#rowOf(type, object) : undefined;
    const cells = [type, ...this.#columns.cells(object, row)];
    const lines = this.#headerDone ? [cells] : [["EVENT", ...this.#columns.headers], cells];
    this.#headerDone = true;
    return this.#text.render(lines);
  }

  async #rowOf(type: EventType, object: KubeObjectLike): Promise<TableRow> {
    const key = keyOf(object);
    const known = this.#rows.get(key);
    const version = object.metadata?.resourceVersion;
    if (type === "DELETED") {
      this.#rows.delete(key);
      return known?.row ?? this.#nameOnly(object);
    }
    if (known && known.resourceVersion === version) return known.row;
    const fetched = await this.#fetch(object);
    const row = fetched ?? known?.row ?? this.#nameOnly(object);
    this.#rows.set(key, { resourceVersion: version, row });
    return row;
  }

  /** The object's row now, or undefined when it cannot be read (gone since, refused). */
  async #fetch(object: KubeObjectLike): Promise<TableRow | undefined> {
    const o = this.#o;
    const path = `${resourcePath({ ...o.resource, namespace: object.metadata?.namespace })}/${
      encodeURIComponent(object.metadata?.name ?? "")
    }`;
    try {
      const body = await o.client.requestJson<unknown>(path, {
        accept: TABLE_ACCEPT,
        signal: o.signal,
      });
      return isServerTable(body) ? body.rows?.[0] : undefined;
    } catch {
      o.signal.throwIfAborted();
      return undefined;
    }
  }

  /** A row with the name in the name column, unknown elsewhere. */
  #nameOnly(object: KubeObjectLike): TableRow {
    return {
      cells: this.#definitions!.map((d) =>
        d.format === "name" ? formatCell(object.metadata?.name) : "<unknown>"
      ),
    };
  }
}
