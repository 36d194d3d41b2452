/**
 * A loopback HTTP server (node:http, on Deno and Node) answering with a
 * scripted handler, for wire-level tests of answers the fake API server
 * does not make: exact body bytes written chunk by chunk, hostile statuses
 * and headers, redirects. Every request is logged.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One logged request. */
export interface SeenRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  authorization?: string;
}

/** A running server. */
export interface HttpServer {
  /** `http://127.0.0.1:PORT` */
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** What a handler does with a request. */
export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Starts a server on 127.0.0.1 (a free port) that answers with `handler`. */
export async function startHttpServer(handler: Handler): Promise<HttpServer> {
  const seen: SeenRequest[] = [];
  const running = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    seen.push({
      method: req.method ?? "",
      url: req.url ?? "",
      authorization: req.headers.authorization,
    });
    req.resume();
    const done: Promise<void> = Promise.resolve()
      .then(() => handler(req, res))
      .catch(() => void res.destroy())
      .finally(() => running.delete(done));
    running.add(done);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      // Handlers still writing (their client gave up) stop at their next write: wait for them.
      await Promise.all([...running]);
    },
  };
}

/**
 * Writes `chunks` as separate writes (each flushed as its own HTTP chunk,
 * with a pause so that the client reads them apart), then ends; stops
 * early when the client has gone.
 */
export async function writeChunks(
  res: ServerResponse,
  chunks: Uint8Array[],
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<void> {
  res.writeHead(200, headers);
  for (const chunk of chunks) {
    if (res.destroyed) return;
    res.write(chunk);
    await new Promise((r) => setTimeout(r, 2));
  }
  res.end();
}

/** `bytes` cut at each of `cuts` (byte offsets, ascending). */
export function cutAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of cuts) {
    if (cut > from && cut < bytes.length) {
      out.push(bytes.slice(from, cut));
      from = cut;
    }
  }
  out.push(bytes.slice(from));
  return out;
}

/** The offsets of every U+FEFF (EF BB BF) in `bytes`. */
export function bomOffsets(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 2 < bytes.length; i++) {
    if (bytes[i] === 0xef && bytes[i + 1] === 0xbb && bytes[i + 2] === 0xbf) out.push(i);
  }
  return out;
}
