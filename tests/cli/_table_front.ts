/**
 * A front for the test kit's API server that serves what kube-apiserver
 * serves with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` on
 * GETs of configmaps (the test kit has no Tables): the columns NAME, DATA,
 * AGE (priority 0) and LABELS (priority 1), rows with the objects'
 * metadata. Every other request is passed through as is (watches
 * streamed).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

interface Obj {
  metadata: Record<string, unknown> & { labels?: Record<string, string> };
  data?: Record<string, string>;
}

const COLUMNS = [
  { name: "Name", type: "string", format: "name", priority: 0 },
  { name: "Data", type: "integer", format: "", priority: 0 },
  { name: "Age", type: "string", format: "", priority: 0 },
  { name: "Labels", type: "string", format: "", priority: 1 },
];

const row = (o: Obj) => ({
  cells: [
    o.metadata.name,
    Object.keys(o.data ?? {}).length,
    "5m",
    o.metadata.labels
      ? Object.entries(o.metadata.labels).map(([k, v]) => `${k}=${v}`).join(",")
      : null,
  ],
  object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
});

/** A running front: its URL, how many Table answers it gave, and close(). */
export interface TableFront {
  url: string;
  tables: number;
  close(): Promise<void>;
}

/** Starts a front for the API server at `backend`. */
export async function startTableFront(backend: string): Promise<TableFront> {
  const inflight = new Set<AbortController>();
  const front: TableFront = { url: "", tables: 0, close: () => Promise.resolve() };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const ac = new AbortController();
    inflight.add(ac);
    res.on("close", () => ac.abort());
    try {
      const wantsTable = /as=Table/.test(req.headers.accept ?? "") &&
        /\/configmaps(\/|\?|$)/.test(req.url ?? "");
      const upstream = await fetch(new URL(req.url ?? "/", backend), {
        headers: { accept: wantsTable ? "application/json" : req.headers.accept ?? "*/*" },
        signal: ac.signal,
      });
      if (wantsTable && upstream.ok) {
        const body = await upstream.json();
        const objects: Obj[] = Array.isArray(body.items) ? body.items : [body];
        front.tables++;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          kind: "Table",
          apiVersion: "meta.k8s.io/v1",
          metadata: Array.isArray(body.items) ? body.metadata : {},
          columnDefinitions: COLUMNS,
          rows: objects.map(row),
        }));
        return;
      }
      res.writeHead(upstream.status, {
        "content-type": upstream.headers.get("content-type") ?? "application/json",
      });
      if (upstream.body) {
        for await (const chunk of upstream.body) res.write(chunk);
      }
      res.end();
    } catch {
      res.destroy();
    } finally {
      inflight.delete(ac);
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  front.close = async () => {
    for (const ac of inflight) ac.abort();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // let the aborted handlers finish
    while (inflight.size > 0) await new Promise((r) => setTimeout(r, 1));
  };
  return front;
}
